#include "strata/data/hf_tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "data/hf_pretokenizer.h"
#include "strata/data/text_dataset.h"
#include "strata/error.h"
#include "strata/formats/tokenizer_config.h"
#include "strata/formats/tokenizer_json.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using File = formats::TokenizerJson;

// The id a config or template names by its text: an added token's, else the
// vocabulary token spelled so.
std::optional<int64_t> idOfToken(const File& file, const std::string& text) {
  for (const File::AddedToken& token : file.addedTokens)
    if (token.content == text) return token.id;
  for (const auto& [spelled, id] : file.vocab)
    if (spelled == text) return id;
  return std::nullopt;
}

std::optional<int64_t> single(const std::vector<int64_t>& ids) {
  if (ids.size() == 1) return ids[0];
  return std::nullopt;
}

struct Boundaries {
  std::optional<int64_t> begin, end;
};

// Beginning and end of text: tokenizer_config.json beside the file wins
// where it names them, then the post-processor's template (see the header).
Boundaries boundaries(const File& file) {
  std::optional<formats::TokenizerConfig> config;
  if (const fs::path beside = fs::path(file.path).parent_path() / "tokenizer_config.json";
      fs::exists(beside))
    config = formats::readTokenizerConfig(beside.string());
  const auto named = [&](const std::optional<std::string>& text, const char* key) {
    std::optional<int64_t> id;
    if (text && !(id = idOfToken(file, *text)))
      throw ConfigError(config->path + ": " + key + " \"" + *text + "\" is not a token of " +
                        file.path);
    return id;
  };
  Boundaries out;
  if (config) out.end = named(config->eosToken, "eos_token");
  if (!out.end) out.end = single(file.templateSuffix);
  if (!out.end) out.end = idOfToken(file, "<|endoftext|>");
  if (config && config->addBosToken == false) return out;
  if (config) out.begin = named(config->bosToken, "bos_token");
  if (!out.begin) out.begin = single(file.templatePrefix);
  if (out.begin == out.end) out.begin.reset();
  return out;
}

}  // namespace

HfTokenizer::HfTokenizer(const std::string& path) : path_(path) {
  const File file = formats::readTokenizerJson(path);
  int64_t maxId = -1;
  for (const auto& [token, id] : file.vocab) maxId = std::max(maxId, id);
  for (const File::AddedToken& token : file.addedTokens) maxId = std::max(maxId, token.id);

  bpe_ = ByteLevelBpe(maxId + 1);
  std::vector<const std::string*> spelledById(maxId + 1, nullptr);
  for (const auto& [token, id] : file.vocab) {
    if (!bpe_.addSpelledToken(static_cast<int32_t>(id), token))
      throw ConfigError(path + ": model.vocab: id " + std::to_string(id) +
                        " is given to two tokens, \"" + *spelledById[id] + "\" and \"" + token +
                        "\"");
    spelledById[id] = &token;
  }

  preTokenizer_ = std::make_unique<const HfPreTokenizer>(file);
  ignoreMerges_ = file.ignoreMerges;
  for (size_t i = 0; i < file.addedTokens.size(); ++i) {
    const File::AddedToken& token = file.addedTokens[i];
    if (const std::string* spelled = spelledById[token.id]) {
      // GPT-2's <|endoftext|> is in both lists, the same token.
      if (*spelled != token.content)
        throw ConfigError(path + ": added_tokens[" + std::to_string(i) + "]: \"" + token.content +
                          "\" has id " + std::to_string(token.id) +
                          ", which model.vocab gives to \"" + *spelled + "\"");
    } else if (!bpe_.addVerbatimToken(static_cast<int32_t>(token.id), token.content)) {
      throw ConfigError(path + ": added_tokens[" + std::to_string(i) + "]: id " +
                        std::to_string(token.id) + " is given to two added tokens");
    }
    addedIds_.emplace(token.content, token.id);
    if ((token.lstrip || token.rstrip || token.singleWord) && unsupportedAdded_.empty())
      unsupportedAdded_ = token.content;
    AddedTokenTable& table = token.normalized ? normalizedAdded_ : rawAdded_;
    const std::string content =
        token.normalized ? preTokenizer_->normalize(token.content) : token.content;
    if (table.ids.emplace(content, token.id).second) {
      table.lengths.push_back(content.size());
      table.firstBytes[static_cast<unsigned char>(content[0])] = true;
    }
  }
  for (AddedTokenTable* table : {&rawAdded_, &normalizedAdded_}) {
    std::sort(table->lengths.begin(), table->lengths.end(), std::greater<>());
    table->lengths.erase(std::unique(table->lengths.begin(), table->lengths.end()),
                         table->lengths.end());
  }

  bpe_.findByteTokens(path + ": model.vocab");
  for (size_t i = 0; i < file.merges.size(); ++i) {
    const std::string where = path + ": model.merges[" + std::to_string(i) + "]";
    const auto& [left, right] = file.merges[i];
    bpe_.addMerge(bpe_.spelledId(left, where, "model.vocab"),
                  bpe_.spelledId(right, where, "model.vocab"),
                  bpe_.spelledId(left + right, where, "model.vocab"));
  }

  const Boundaries ends = boundaries(file);
  beginOfText_ = ends.begin;
  endOfText_ = ends.end;

  description_ = "tokenizer.json byte-level BPE (" + path + ": " +
                 std::to_string(bpe_.tokenCount()) + " tokens, " +
                 std::to_string(file.merges.size()) + " merges, " +
                 std::to_string(file.addedTokens.size()) + " added tokens)";
}

HfTokenizer::~HfTokenizer() = default;

std::optional<int64_t> HfTokenizer::addedTokenId(std::string_view content) const {
  auto it = addedIds_.find(std::string(content));
  if (it == addedIds_.end()) return std::nullopt;
  return it->second;
}

template <typename OnText>
void HfTokenizer::splitAddedTokens(std::string_view text, const AddedTokenTable& table,
                                   std::vector<int64_t>& ids, OnText onText) const {
  size_t done = 0;
  for (size_t at = 0; at < text.size(); ++at) {
    if (!table.firstBytes[static_cast<unsigned char>(text[at])]) continue;
    for (size_t length : table.lengths) {
      if (length > text.size() - at) continue;
      auto it = table.ids.find(std::string(text.substr(at, length)));
      if (it == table.ids.end()) continue;
      if (at > done) onText(text.substr(done, at - done));
      ids.push_back(it->second);
      done = at + length;
      at = done - 1;
      break;
    }
  }
  if (done < text.size()) onText(text.substr(done));
}

void HfTokenizer::encodeNormalized(std::string_view text, std::vector<int64_t>& ids) const {
  std::vector<std::string> pieces;
  preTokenizer_->split(text, pieces);
  for (const std::string& piece : pieces) {
    if (ignoreMerges_)
      if (std::optional<int32_t> whole = bpe_.find(piece)) {
        ids.push_back(*whole);
        continue;
      }
    bpe_.encodePiece(piece, ids);
  }
}

std::vector<int64_t> HfTokenizer::encode(std::string_view text) const {
  return encode(text, AddedTokens::kAsText);
}

std::vector<int64_t> HfTokenizer::encode(std::string_view text, AddedTokens addedTokens) const {
  if (int64_t bad = firstInvalidUtf8(text); bad >= 0)
    throw ConfigError("text is not UTF-8: byte offset " + std::to_string(bad) +
                      " does not start a valid UTF-8 sequence");
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3 + 1);
  if (addedTokens == AddedTokens::kAsText) {
    encodeNormalized(preTokenizer_->normalize(text), ids);
    return ids;
  }
  if (!unsupportedAdded_.empty())
    throw ConfigError(path_ + ": added token \"" + unsupportedAdded_ +
                      "\" is marked lstrip, rstrip or single_word, which Strata does not "
                      "implement when recognising added tokens in text");
  // As Hugging Face: tokens matched in the raw text first, then in each
  // stretch between them once normalized.
  splitAddedTokens(text, rawAdded_, ids, [&](std::string_view raw) {
    const std::string normalized = preTokenizer_->normalize(raw);
    splitAddedTokens(normalized, normalizedAdded_, ids,
                     [&](std::string_view stretch) { encodeNormalized(stretch, ids); });
  });
  return ids;
}

std::string HfTokenizer::decode(const std::vector<int64_t>& ids) const {
  return bpe_.decode(ids, path_);
}

}  // namespace strata::train

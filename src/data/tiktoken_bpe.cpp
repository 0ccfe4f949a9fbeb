#include "strata/data/tiktoken_bpe.h"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <unordered_map>

#include "data/hf_pretokenizer.h"
#include "strata/data/text_dataset.h"
#include "strata/error.h"

namespace strata::train {
namespace {

// Llama 3's pattern, as Meta's tokenizer.py and its tokenizer.json give it:
// numbers in groups of up to three digits, a letter run may take one leading
// non-letter, punctuation keeps the line breaks that follow it.
constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Family {
  const char* name;
  int64_t ranks;
  const char* pattern;
  std::vector<std::string> specials;  // ids ranks, ranks + 1, ...
  const char* begin;                  // nullptr: no begin-of-text token
  const char* end;
};

// Llama 3's 256 special tokens, in id order from 128000.
std::vector<std::string> llama3Specials() {
  std::vector<std::string> names = {"<|begin_of_text|>",
                                    "<|end_of_text|>",
                                    "<|reserved_special_token_0|>",
                                    "<|reserved_special_token_1|>",
                                    "<|finetune_right_pad_id|>",
                                    "<|step_id|>",
                                    "<|start_header_id|>",
                                    "<|end_header_id|>",
                                    "<|eom_id|>",
                                    "<|eot_id|>",
                                    "<|python_tag|>",
                                    "<|image|>"};
  for (int reserved = 2; names.size() < 256; ++reserved)
    names.push_back("<|reserved_special_token_" + std::to_string(reserved) + "|>");
  return names;
}

const std::vector<Family>& families() {
  static const std::vector<Family> all = {
      {"GPT-2", 50256, kGpt2Pattern, {"<|endoftext|>"}, nullptr, "<|endoftext|>"},
      {"Llama 3", 128000, kLlama3Pattern, llama3Specials(), "<|begin_of_text|>", "<|end_of_text|>"},
  };
  return all;
}

const Family& familyOf(int64_t ranks, const std::string& path) {
  for (const Family& family : families())
    if (family.ranks == ranks) return family;
  throw ConfigError(path + ": a tiktoken file of " + std::to_string(ranks) +
                    " ranks is neither GPT-2's (50256, gpt2.tiktoken) nor Llama 3's (128000, "
                    "tokenizer.model); those are the families whose pattern and special tokens "
                    "Strata knows");
}

// The bytes of base64 `text`, or nullopt when it is not base64.
std::optional<std::string> fromBase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string bytes(text.size() / 4 * 3, '\0');
  const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                     reinterpret_cast<const unsigned char*>(text.data()),
                                     static_cast<int>(text.size()));
  if (length < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding's zero bytes too.
  const size_t padding = text.size() - text.find_last_not_of('=') - 1;
  if (padding > 2) return std::nullopt;
  bytes.resize(static_cast<size_t>(length) - padding);
  return bytes;
}

struct RankLine {
  int64_t line;
  int64_t rank;
  std::string bytes;
};

// "BASE64 RANK" split into its two fields; nullopt for anything else.
std::optional<std::pair<std::string_view, std::string_view>> fields(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
    return std::nullopt;
  return std::make_pair(line.substr(0, space), line.substr(space + 1));
}

std::optional<int64_t> rankOf(std::string_view text) {
  int64_t rank = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
  if (error != std::errc() || end != text.data() + text.size() || rank < 0) return std::nullopt;
  return rank;
}

RankLine parseLine(std::string_view line, int64_t lineNo, const std::string& path) {
  const std::string where = path + ":" + std::to_string(lineNo);
  const auto split = fields(line);
  if (!split)
    throw ConfigError(where +
                      ": expected \"BASE64 RANK\" (a token's bytes in base64, a space, its "
                      "rank), got \"" +
                      std::string(line.substr(0, 80)) + "\"");
  std::optional<std::string> bytes = fromBase64(split->first);
  if (!bytes) throw ConfigError(where + ": \"" + std::string(split->first) + "\" is not base64");
  std::optional<int64_t> rank = rankOf(split->second);
  if (!rank)
    throw ConfigError(where + ": the rank \"" + std::string(split->second) +
                      "\" is not a non-negative integer");
  return {lineNo, *rank, std::move(*bytes)};
}

// Every line of the file; throws naming a malformed line or a token given twice.
std::vector<RankLine> readRanks(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the tiktoken file");
  std::vector<RankLine> ranks;
  std::unordered_map<std::string, int64_t> lineOfBytes;
  std::string line;
  for (int64_t lineNo = 1; std::getline(in, line); ++lineNo) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    RankLine parsed = parseLine(line, lineNo, path);
    const auto [at, fresh] = lineOfBytes.emplace(parsed.bytes, lineNo);
    if (!fresh)
      throw ConfigError(path + ":" + std::to_string(lineNo) + ": the token of line " +
                        std::to_string(at->second) + " again (each token has one rank)");
    ranks.push_back(std::move(parsed));
  }
  if (in.bad()) throw ConfigError(path + ": read failed");
  if (ranks.empty()) throw ConfigError(path + ": no ranks (an empty tiktoken file)");
  return ranks;
}

// Sorts by rank; throws naming a rank given twice or the first one missing.
void checkRanksRunFromZero(std::vector<RankLine>& ranks, const std::string& path) {
  std::sort(ranks.begin(), ranks.end(),
            [](const RankLine& a, const RankLine& b) { return a.rank < b.rank; });
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0 && ranks[i].rank == ranks[i - 1].rank)
      throw ConfigError(path + ":" + std::to_string(ranks[i].line) + ": rank " +
                        std::to_string(ranks[i].rank) + " again (line " +
                        std::to_string(ranks[i - 1].line) + " has it)");
    if (ranks[i].rank != static_cast<int64_t>(i))
      throw ConfigError(path + ": rank " + std::to_string(i) +
                        " is missing (the ranks run from 0 " + "without a gap; line " +
                        std::to_string(ranks[i].line) + " has rank " +
                        std::to_string(ranks[i].rank) + ")");
  }
}

std::unique_ptr<HfPreTokenizer> patternSplitter(const char* pattern, const std::string& path) {
  formats::TokenizerJson file;
  file.path = path;
  formats::TokenizerJson::PreTokenizerStep split;
  split.pattern = pattern;
  file.preTokenizer.push_back(split);
  return std::make_unique<HfPreTokenizer>(file);
}

}  // namespace

bool looksLikeTiktoken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  const auto split = fields(line);
  return split && fromBase64(split->first) && rankOf(split->second);
}

TiktokenBpe::TiktokenBpe(const std::string& path) {
  std::vector<RankLine> ranks = readRanks(path);
  checkRanksRunFromZero(ranks, path);
  ranks_ = static_cast<int64_t>(ranks.size());
  const Family& family = familyOf(ranks_, path);
  specials_ = family.specials;
  pattern_ = family.pattern;

  bpe_ = ByteLevelBpe(ranks_ + static_cast<int64_t>(specials_.size()));
  for (const RankLine& rank : ranks) bpe_.addToken(static_cast<int32_t>(rank.rank), rank.bytes);
  for (size_t i = 0; i < specials_.size(); ++i)
    bpe_.addVerbatimToken(static_cast<int32_t>(ranks_ + i), specials_[i]);
  bpe_.findByteTokens(path);
  // tiktoken merges two adjacent parts when their bytes joined are a token,
  // ranked by that token: every split of a token into two tokens is a merge.
  for (const RankLine& rank : ranks) {
    const std::string_view bytes = rank.bytes;
    for (size_t cut = 1; cut < bytes.size(); ++cut) {
      std::optional<int32_t> left = bpe_.find(bytes.substr(0, cut));
      std::optional<int32_t> right = left ? bpe_.find(bytes.substr(cut)) : std::nullopt;
      if (right) {
        const auto id = static_cast<int32_t>(rank.rank);
        bpe_.addMergeAtRank(*left, *right, id, id);
      }
    }
  }
  pretokenizer_ = patternSplitter(family.pattern, path);
  if (family.begin) beginOfText_ = specialId(family.begin);
  endOfText_ = specialId(family.end);
  description_ = std::string(family.name) + " tiktoken BPE (" + path + ": " +
                 std::to_string(ranks_) + " ranks, " + std::to_string(specials_.size()) +
                 " special tokens)";
}

TiktokenBpe::~TiktokenBpe() = default;

std::optional<int64_t> TiktokenBpe::specialId(std::string_view name) const {
  const auto it = std::find(specials_.begin(), specials_.end(), name);
  if (it == specials_.end()) return std::nullopt;
  return ranks_ + (it - specials_.begin());
}

std::vector<int64_t> TiktokenBpe::encode(std::string_view text) const {
  if (int64_t bad = firstInvalidUtf8(text); bad >= 0)
    throw ConfigError("text is not UTF-8: byte offset " + std::to_string(bad) +
                      " does not start a valid UTF-8 sequence");
  std::vector<std::string> pieces;
  pretokenizer_->split(text, pieces);
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3 + 1);
  for (const std::string& piece : pieces) {
    // A piece that is a token is taken whole, as tiktoken does, before merging.
    if (std::optional<int32_t> whole = bpe_.find(piece))
      ids.push_back(*whole);
    else
      bpe_.encodePiece(piece, ids);
  }
  return ids;
}

std::string TiktokenBpe::decode(const std::vector<int64_t>& ids) const {
  return bpe_.decode(ids, "tiktoken");
}

}  // namespace strata::train

#include "strata/data/tokenizer.h"

#include <filesystem>

#include "formats/atomic_file.h"
#include "strata/data/gpt2_bpe.h"
#include "strata/data/hf_tokenizer.h"
#include "strata/data/sentencepiece_tokenizer.h"
#include "strata/data/tiktoken_bpe.h"
#include "strata/data/tiktoken_hugging_face.h"
#include "strata/error.h"

namespace strata::train {
namespace {

class ByteTokenizer : public Tokenizer {
 public:
  std::vector<int64_t> encode(std::string_view text) const override {
    return encodeBytes(std::string(text));
  }
  std::string decode(const std::vector<int64_t>& ids) const override { return decodeBytes(ids); }
  int64_t vocabSize() const override { return kByteVocabSize; }
  std::string describe() const override { return "byte (256 tokens)"; }
};

}  // namespace

std::vector<int64_t> encodeBytes(const std::string& text) {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

std::string decodeBytes(const std::vector<int64_t>& ids) {
  std::string text;
  text.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= kByteVocabSize)
      throw ConfigError("token id " + std::to_string(id) + " is not a byte (vocabulary is 0.." +
                        std::to_string(kByteVocabSize - 1) + ")");
    text.push_back(static_cast<char>(id));
  }
  return text;
}

std::unique_ptr<Tokenizer> makeTokenizer(const std::string& spec) {
  namespace fs = std::filesystem;
  if (spec == "byte") return std::make_unique<ByteTokenizer>();
  if (spec.empty())
    throw ConfigError(
        "empty tokenizer: expected 'byte', a tokenizer.json, a directory of GPT-2 BPE files, a "
        "tiktoken file or a SentencePiece .model file");
  std::error_code ec;
  if (fs::is_directory(spec, ec)) {
    // tokenizer.json first: it alone says how to pre-tokenize.
    const fs::path json = fs::path(spec) / "tokenizer.json";
    if (fs::is_regular_file(json, ec)) return std::make_unique<HfTokenizer>(json.string());
    return Gpt2Bpe::fromDirectory(spec);
  }
  if (fs::is_regular_file(spec, ec)) {
    const fs::path extension = fs::path(spec).extension();
    if (extension == ".json") return std::make_unique<HfTokenizer>(spec);
    // Meta's Llama 3 tokenizer.model is tiktoken's text, Llama 2's SentencePiece's binary.
    if (extension == ".tiktoken" || looksLikeTiktoken(spec))
      return std::make_unique<TiktokenBpe>(spec);
    return std::make_unique<SentencePieceTokenizer>(spec);
  }
  throw ConfigError("tokenizer '" + spec +
                    "': no such file or directory (expected 'byte', a tokenizer.json or a "
                    "directory holding one, a directory holding GPT-2's encoder.json and "
                    "vocab.bpe, a tiktoken file (gpt2.tiktoken, Llama 3's tokenizer.model) or a "
                    "SentencePiece .model file)");
}

namespace {

// `from` copied to folder/name (atomically: a reader never sees half of it).
std::string copyAs(const std::filesystem::path& from, const std::filesystem::path& folder,
                   const std::string& name) {
  std::string to = (folder / name).string();
  formats::writeFileAtomically(to, formats::readWholeFile(from.string()));
  return to;
}

}  // namespace

std::vector<std::string> copyTokenizerFiles(const std::string& spec, const std::string& folder) {
  namespace fs = std::filesystem;
  // Refuses what names no tokenizer, as training did.
  const std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(spec);
  if (spec == "byte") return {};
  fs::path source(spec), to(folder);
  if (fs::is_directory(source) && fs::is_regular_file(source / "tokenizer.json"))
    source /= "tokenizer.json";
  if (fs::is_directory(source)) {
    // GPT-2's BPE files, under OpenAI's names or Hugging Face's.
    bool openAi = fs::is_regular_file(source / "encoder.json");
    return {copyAs(source / (openAi ? "encoder.json" : "vocab.json"), to, "vocab.json"),
            copyAs(source / (openAi ? "vocab.bpe" : "merges.txt"), to, "merges.txt")};
  }
  if (const auto* tiktoken = dynamic_cast<const TiktokenBpe*>(tokenizer.get())) {
    // transformers reads no tiktoken file by itself: the same tokenizer as
    // Hugging Face's files beside Meta's.
    std::string json = (to / "tokenizer.json").string(),
                config = (to / "tokenizer_config.json").string();
    formats::writeFileAtomically(json, tiktokenTokenizerJson(*tiktoken));
    formats::writeFileAtomically(config, tiktokenTokenizerConfigJson(*tiktoken));
    return {copyAs(source, to, "tokenizer.model"), json, config};
  }
  if (source.extension() != ".json") return {copyAs(source, to, "tokenizer.model")};
  std::vector<std::string> written = {copyAs(source, to, "tokenizer.json")};
  for (const char* beside : {"tokenizer_config.json", "special_tokens_map.json"}) {
    fs::path file = source.parent_path() / beside;
    if (fs::is_regular_file(file)) written.push_back(copyAs(file, to, beside));
  }
  return written;
}

std::optional<std::string> tokenizerIn(const std::string& folder) {
  namespace fs = std::filesystem;
  fs::path in(folder);
  if (fs::is_regular_file(in / "tokenizer.json") || fs::is_regular_file(in / "vocab.json"))
    return folder;
  if (fs::is_regular_file(in / "tokenizer.model")) return (in / "tokenizer.model").string();
  return std::nullopt;
}

}  // namespace strata::train

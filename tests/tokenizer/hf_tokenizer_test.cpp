// Hugging Face tokenizer.json files on small vocabularies written by the
// test: ignore_merges, Split patterns, ByteLevel's prefix space, NFC, added
// tokens as text and recognised, where BOS and EOS come from, documents
// joined by `strata data prepare`, and the errors of files Strata does not
// read. LlamaReference.* checks it against Hugging Face's own JavaScript
// library on Llama 3's real file.
#include "strata/data/hf_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/data/prepare.h"
#include "strata/data/prepared_data.h"
#include "strata/error.h"
#include "test_files.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using strata::test::errorOf;
using strata::test::freshDir;
using strata::test::spell;
using strata::test::writeFile;
using Ids = std::vector<int64_t>;

// A tokenizer.json of the 256 bytes (id = byte) and `extra` tokens (ids 256,
// 257, ...), with `merges` of byte strings, split by GPT-2's pattern.
json tokenizerJson(const std::vector<std::string>& extra,
                   const std::vector<std::pair<std::string, std::string>>& merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[spell(std::string(1, static_cast<char>(b)))] = b;
  for (size_t i = 0; i < extra.size(); ++i) vocab[spell(extra[i])] = 256 + i;
  json pairs = json::array();
  for (const auto& [left, right] : merges) pairs.push_back(spell(left) + " " + spell(right));
  return {
      {"version", "1.0"},
      {"added_tokens", json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", pairs}}}};
}

fs::path write(const std::string& name, const json& file) {
  const fs::path dir = freshDir(name);
  writeFile(dir / "tokenizer.json", file.dump());
  return dir / "tokenizer.json";
}

json addedToken(int64_t id, const std::string& content) {
  return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", true}};
}

json splitStep(const std::string& regex, const std::string& behavior) {
  return {{"type", "Split"},
          {"pattern", {{"Regex", regex}}},
          {"behavior", behavior},
          {"invert", false}};
}

json sequence(const json& first, const json& second) {
  return {{"type", "Sequence"}, {"pretokenizers", {first, second}}};
}

const json kByteLevelOnly = {
    {"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}};

// Export's copy: tokenizer.json and the files transformers keeps beside it,
// found again in the new folder.
TEST(HfTokenizer, CopiedFilesAreFoundBesideTheWeights) {
  fs::path file = write("copy_source", tokenizerJson({"he"}, {{"h", "e"}}));
  writeFile(file.parent_path() / "tokenizer_config.json", "{\"model_max_length\": 64}");
  fs::path weights = freshDir("copy_weights");
  std::vector<std::string> written =
      copyTokenizerFiles(file.parent_path().string(), weights.string());
  EXPECT_EQ(written, (std::vector<std::string>{(weights / "tokenizer.json").string(),
                                               (weights / "tokenizer_config.json").string()}));
  std::optional<std::string> found = tokenizerIn(weights.string());
  ASSERT_TRUE(found);
  EXPECT_EQ(makeTokenizer(*found)->encode("hehe"), (Ids{256, 256}));
  EXPECT_FALSE(tokenizerIn(freshDir("copy_nothing").string()));
  EXPECT_TRUE(copyTokenizerFiles("byte", weights.string()).empty());
}

TEST(HfTokenizer, MergesTheLowestRankedPairFirstAndDecodesBack) {
  // "abc": (b, c) is ranked first, so a + bc, never ab + c.
  const HfTokenizer t(
      write("merges", tokenizerJson({"ab", "bc", "abc"}, {{"b", "c"}, {"a", "b"}, {"a", "bc"}}))
          .string());
  EXPECT_EQ(t.encode("abc ab"), (Ids{258, ' ', 256}));
  EXPECT_EQ(t.decode(t.encode("héllo wörld 😀")), "héllo wörld 😀");
  EXPECT_EQ(t.vocabSize(), 259);
  EXPECT_EQ(t.mergeCount(), 3u);
}

TEST(HfTokenizer, IgnoreMergesTakesAWholePieceThatIsInTheVocabulary) {
  // "xyz" is a token no merge reaches.
  json file = tokenizerJson({"xy", "xyz"}, {{"x", "y"}});
  EXPECT_EQ(HfTokenizer(write("merges_on", file).string()).encode("xyz"), (Ids{256, 'z'}));
  file["model"]["ignore_merges"] = true;
  EXPECT_EQ(HfTokenizer(write("merges_off", file).string()).encode("xyz"), (Ids{257}));
}

TEST(HfTokenizer, SplitIsolatesOrRemovesMatchesBeforeByteLevel) {
  json file = tokenizerJson({"ab"}, {{"a", "b"}});
  file["pre_tokenizer"] = sequence(splitStep("\\p{N}", "Isolated"), kByteLevelOnly);
  // "a1b": pieces a, 1, b, so "ab" is never merged across the digit.
  EXPECT_EQ(HfTokenizer(write("isolated", file).string()).encode("a1bab"),
            (Ids{'a', '1', 'b', 256}));
  file["pre_tokenizer"] = sequence(splitStep("\\p{N}", "Removed"), kByteLevelOnly);
  EXPECT_EQ(HfTokenizer(write("removed", file).string()).encode("a1bab"), (Ids{'a', 'b', 256}));
  // A String pattern is literal, not a regular expression.
  file["pre_tokenizer"] =
      sequence({{"type", "Split"}, {"pattern", {{"String", "."}}}, {"behavior", "Isolated"}},
               kByteLevelOnly);
  EXPECT_EQ(HfTokenizer(write("literal", file).string()).encode("ab.ab"), (Ids{256, '.', 256}));
}

TEST(HfTokenizer, ByteLevelPrefixSpaceAndNfc) {
  json file = tokenizerJson({}, {});
  file["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
  EXPECT_EQ(HfTokenizer(write("prefix", file).string()).encode("hi"), (Ids{' ', 'h', 'i'}));
  file["pre_tokenizer"] = kByteLevelOnly;
  file["normalizer"] = {{"type", "NFC"}};
  // e + COMBINING ACUTE ACCENT is é, U+00E9, once normalized.
  EXPECT_EQ(HfTokenizer(write("nfc", file).string()).encode("e\u0301"), (Ids{0xC3, 0xA9}));
}

TEST(HfTokenizer, AddedTokensAreTextUnlessRecognised) {
  json file = tokenizerJson({}, {});
  file["added_tokens"] = {addedToken(256, "<|eot|>"), addedToken(257, "<|eot|>x")};
  const HfTokenizer t(write("added", file).string());
  const Ids asText = t.encode("a<|eot|>b");
  EXPECT_EQ(std::count(asText.begin(), asText.end(), 256), 0);
  EXPECT_EQ(t.decode(asText), "a<|eot|>b");
  // Leftmost, then longest.
  EXPECT_EQ(t.encode("a<|eot|>b<|eot|>x", HfTokenizer::AddedTokens::kRecognised),
            (Ids{'a', 256, 'b', 257}));
  EXPECT_EQ(t.decode({256}), "<|eot|>");
  EXPECT_EQ(t.addedTokenId("<|eot|>x"), 257);
  EXPECT_EQ(t.vocabSize(), 258);

  file["added_tokens"][0]["lstrip"] = true;
  const HfTokenizer stripping(write("lstrip", file).string());
  EXPECT_NO_THROW(stripping.encode("a <|eot|>"));
  const std::string message =
      errorOf([&] { stripping.encode("a <|eot|>", HfTokenizer::AddedTokens::kRecognised); });
  EXPECT_NE(message.find("\"<|eot|>\" is marked lstrip, rstrip or single_word"), std::string::npos)
      << message;
}

TEST(HfTokenizer, BeginAndEndOfTextComeFromTheConfigThenTheTemplate) {
  json file = tokenizerJson({}, {});
  file["added_tokens"] = {addedToken(256, "<s>"), addedToken(257, "</s>"),
                          addedToken(258, "<|endoftext|>")};
  fs::path path = write("bos_none", file);
  EXPECT_EQ(HfTokenizer(path.string()).beginOfTextId(), std::nullopt);
  EXPECT_EQ(HfTokenizer(path.string()).endOfTextId(), 258);  // GPT-2's name

  file["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "<s>"}}}},
        {{"Sequence", {{"id", "A"}}}},
        {{"SpecialToken", {{"id", "</s>"}}}}}},
      {"special_tokens",
       {{"<s>", {{"id", "<s>"}, {"ids", {256}}}}, {"</s>", {{"id", "</s>"}, {"ids", {257}}}}}}};
  path = write("template", file);
  const HfTokenizer templated(path.string());
  EXPECT_EQ(templated.beginOfTextId(), 256);
  EXPECT_EQ(templated.endOfTextId(), 257);
  // encode() adds neither: whoever joins documents does.
  EXPECT_EQ(templated.encode("x"), (Ids{'x'}));

  const fs::path config = path.parent_path() / "tokenizer_config.json";
  writeFile(config, R"({"bos_token": {"content": "</s>"}, "eos_token": "<|endoftext|>"})");
  EXPECT_EQ(HfTokenizer(path.string()).beginOfTextId(), 257);
  EXPECT_EQ(HfTokenizer(path.string()).endOfTextId(), 258);
  writeFile(config, R"({"add_bos_token": false})");
  EXPECT_EQ(HfTokenizer(path.string()).beginOfTextId(), std::nullopt);
  EXPECT_EQ(HfTokenizer(path.string()).endOfTextId(), 257);
  // One token for both, as GPT-2's config says: documents are separated by
  // it once.
  writeFile(config, R"({"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"})");
  EXPECT_EQ(HfTokenizer(path.string()).beginOfTextId(), std::nullopt);
  EXPECT_EQ(HfTokenizer(path.string()).endOfTextId(), 258);
  writeFile(config, R"({"eos_token": "<|im_end|>"})");
  const std::string message = errorOf([&] { HfTokenizer(path.string()); });
  EXPECT_NE(message.find(config.string() + ": eos_token \"<|im_end|>\" is not a token of"),
            std::string::npos)
      << message;
}

TEST(HfTokenizer, PreparedDocumentsStartWithBeginAndEndWithEndOfText) {
  json file = tokenizerJson({}, {});
  file["added_tokens"] = {addedToken(256, "<|begin_of_text|>"), addedToken(257, "<|end_of_text|>")};
  const fs::path path = write("prepare", file);
  writeFile(path.parent_path() / "tokenizer_config.json",
            R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"})");
  writeFile(path.parent_path() / "docs.jsonl", "{\"text\": \"ab\"}\n{\"text\": \"c\"}\n");
  PrepareOptions options;
  options.tokenizer = path.string();
  options.inputs = {(path.parent_path() / "docs.jsonl").string()};
  options.output = (path.parent_path() / "out").string();
  prepareData(options);
  const PreparedData prepared(options.output);
  ASSERT_EQ(prepared.documents(), 2);
  Ids ids(prepared.tokens());
  prepared.read(0, prepared.tokens(), ids.data());
  EXPECT_EQ(ids, (Ids{256, 'a', 'b', 257, 256, 'c', 257}));
  EXPECT_EQ(prepared.documentStart(1), 4);
}

TEST(HfTokenizer, MakeTokenizerTakesTheFileOrADirectoryHoldingIt) {
  json file = tokenizerJson({"xyz"}, {});
  file["model"]["ignore_merges"] = true;
  const fs::path path = write("spec", file);
  EXPECT_EQ(makeTokenizer(path.string())->encode("xyz"), (Ids{256}));
  // GPT-2's files beside it are not read: only tokenizer.json says how to
  // pre-tokenize.
  writeFile(path.parent_path() / "vocab.json", "{}");
  writeFile(path.parent_path() / "merges.txt", "");
  EXPECT_EQ(makeTokenizer(path.parent_path().string())->encode("xyz"), (Ids{256}));
  EXPECT_NE(makeTokenizer(path.parent_path().string())->describe().find("tokenizer.json"),
            std::string::npos);
}

// The message of loading `file` as tokenizer.json, which must name the file.
std::string refusal(const std::string& name, const json& file) {
  const fs::path path = write(name, file);
  const std::string message = errorOf([&] { HfTokenizer(path.string()); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  return message;
}

TEST(HfTokenizer, FilesItDoesNotReadAreRefusedSayingWhy) {
  const fs::path notJson = freshDir("not_json") / "tokenizer.json";
  writeFile(notJson, "{\"model\": ");
  EXPECT_NE(
      errorOf([&] { HfTokenizer(notJson.string()); }).find(notJson.string() + ": not valid JSON"),
      std::string::npos);

  json file = tokenizerJson({}, {});
  file["model"]["type"] = "Unigram";
  std::string message = refusal("unigram", file);
  EXPECT_NE(message.find("model.type: \"Unigram\" is not supported"), std::string::npos) << message;
  EXPECT_NE(message.find("SentencePiece model (Llama 2, Mistral) is loaded from its .model file"),
            std::string::npos)
      << message;

  file = tokenizerJson({}, {{"a", "q"}});  // "aq" is not in the vocabulary
  message = refusal("merge", file);
  EXPECT_NE(message.find("model.merges[0]: \"aq\" is not in model.vocab"), std::string::npos)
      << message;

  file = tokenizerJson({}, {});
  file["model"]["merges"] = {"a b c"};
  EXPECT_NE(refusal("merge_text", file).find("model.merges[0]: expected two tokens"),
            std::string::npos);

  file = tokenizerJson({}, {});
  file["model"]["vocab"].erase(spell("\n"));
  EXPECT_NE(refusal("bytes", file).find("no token for byte 0xa"), std::string::npos);

  // Llama 2's tokenizer.json: SentencePiece's ▁ and byte fallback.
  file = tokenizerJson({}, {});
  file["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers",
       {{{"type", "Prepend"}, {"prepend", "▁"}},
        {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}};
  message = refusal("llama2", file);
  EXPECT_NE(message.find("normalizer type \"Prepend\" is not supported (supported: none, NFC"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("load their tokenizer.model instead"), std::string::npos) << message;

  file = tokenizerJson({}, {});
  file["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}};
  EXPECT_NE(refusal("metaspace", file)
                .find("pre-tokenizer type \"Metaspace\" is not supported (supported: Split, "
                      "ByteLevel"),
            std::string::npos);

  file["pre_tokenizer"] = splitStep("\\s", "Isolated");
  EXPECT_NE(refusal("no_byte_level", file).find("pre_tokenizer: has no ByteLevel step"),
            std::string::npos);

  file["pre_tokenizer"] = sequence(splitStep("\\s", "MergedWithPrevious"), kByteLevelOnly);
  EXPECT_NE(refusal("behavior", file).find("\"MergedWithPrevious\" is not supported"),
            std::string::npos);

  file["pre_tokenizer"] = sequence(splitStep("(unclosed", "Isolated"), kByteLevelOnly);
  EXPECT_NE(refusal("regex", file).find("ICU cannot compile the pattern (unclosed"),
            std::string::npos);

  file = tokenizerJson({}, {});
  file["decoder"] = {{"type", "WordPiece"}};
  EXPECT_NE(refusal("decoder", file).find("decoder: type \"WordPiece\" is not supported"),
            std::string::npos);

  file = tokenizerJson({}, {});
  file["added_tokens"] = {addedToken('a', "<|a|>")};
  EXPECT_NE(refusal("clash", file)
                .find("added_tokens[0]: \"<|a|>\" has id 97, which model.vocab "
                      "gives to \"a\""),
            std::string::npos);
}

TEST(HfTokenizer, TextThatIsNotUtf8IsRefusedWithItsOffset) {
  const HfTokenizer t(write("utf8", tokenizerJson({}, {})).string());
  const std::string message = errorOf([&] { t.encode("ok\xff"); });
  EXPECT_NE(message.find("byte offset 2"), std::string::npos) << message;
  EXPECT_NE(errorOf([&] { t.decode({300}); }).find("token id 300 is not in"), std::string::npos);
}

}  // namespace
}  // namespace strata::train

// formats::readTokenizerJson and readTokenizerConfig: what lands in the
// struct from each part of the file, Hugging Face's defaults for absent
// fields, and where a mistyped field is named. HfTokenizer's tests check what
// the tokenizer makes of it.
#include "strata/formats/tokenizer_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "strata/formats/tokenizer_config.h"
#include "test_files.h"

namespace strata::formats {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Step = TokenizerJson::PreTokenizerStep;

fs::path write(const std::string& name, const std::string& file, const std::string& text) {
  const fs::path path = test::freshDir(name) / file;
  test::writeFile(path, text);
  return path;
}

// A Llama 3 shaped file, small.
json llama3Shaped() {
  return json::parse(R"({
    "added_tokens": [{"id": 3, "content": "<|begin_of_text|>", "single_word": false,
                      "lstrip": false, "rstrip": true, "normalized": false, "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated",
       "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
    "post_processor": {"type": "Sequence", "processors": [
      {"type": "ByteLevel", "trim_offsets": false},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                  {"Sequence": {"id": "A", "type_id": 0}}],
       "pair": [],
       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [3],
                                                "tokens": ["<|begin_of_text|>"]}}}]},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "dropout": null, "unk_token": null, "byte_fallback": false,
              "ignore_merges": true, "vocab": {"a": 0, "b": 1, "ab": 2},
              "merges": [["a", "b"]]}
  })");
}

TEST(TokenizerJson, ReadsEveryPartStrataUses) {
  const TokenizerJson file =
      readTokenizerJson(write("llama3_shaped", "tokenizer.json", llama3Shaped().dump()).string());
  EXPECT_EQ(file.normalizer, TokenizerJson::Normalizer::kNone);
  ASSERT_EQ(file.preTokenizer.size(), 2u);
  EXPECT_EQ(file.preTokenizer[0].kind, Step::Kind::kSplit);
  EXPECT_EQ(file.preTokenizer[0].pattern, "\\p{N}{1,3}");
  EXPECT_TRUE(file.preTokenizer[0].patternIsRegex);
  EXPECT_EQ(file.preTokenizer[0].behavior, TokenizerJson::SplitBehavior::kIsolated);
  EXPECT_EQ(file.preTokenizer[1].kind, Step::Kind::kByteLevel);
  EXPECT_FALSE(file.preTokenizer[1].addPrefixSpace);
  EXPECT_FALSE(file.preTokenizer[1].useRegex);
  EXPECT_TRUE(file.ignoreMerges);
  EXPECT_EQ(file.vocab.size(), 3u);
  EXPECT_EQ(file.merges, (std::vector<std::pair<std::string, std::string>>{{"a", "b"}}));
  ASSERT_EQ(file.addedTokens.size(), 1u);
  EXPECT_EQ(file.addedTokens[0].id, 3);
  EXPECT_EQ(file.addedTokens[0].content, "<|begin_of_text|>");
  EXPECT_TRUE(file.addedTokens[0].special);
  EXPECT_TRUE(file.addedTokens[0].rstrip);
  EXPECT_FALSE(file.addedTokens[0].normalized);
  EXPECT_EQ(file.templatePrefix, (std::vector<int64_t>{3}));
  EXPECT_TRUE(file.templateSuffix.empty());
}

TEST(TokenizerJson, AbsentFieldsTakeHuggingFacesDefaults) {
  json text = llama3Shaped();
  text["pre_tokenizer"] = {{"type", "ByteLevel"}};
  text["model"].erase("type");  // older files: BPE known by its merges
  text["model"].erase("ignore_merges");
  text["model"]["merges"] = {"a b"};
  text["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}}}};
  text.erase("post_processor");
  const TokenizerJson file =
      readTokenizerJson(write("defaults", "tokenizer.json", text.dump()).string());
  ASSERT_EQ(file.preTokenizer.size(), 1u);
  EXPECT_TRUE(file.preTokenizer[0].addPrefixSpace);
  EXPECT_TRUE(file.preTokenizer[0].useRegex);
  EXPECT_FALSE(file.ignoreMerges);
  EXPECT_EQ(file.merges, (std::vector<std::pair<std::string, std::string>>{{"a", "b"}}));
  EXPECT_EQ(file.normalizer, TokenizerJson::Normalizer::kNfc);
  EXPECT_TRUE(file.templatePrefix.empty());
}

TEST(TokenizerJson, MistypedFieldsAreNamedByTheirPath) {
  json text = llama3Shaped();
  text["added_tokens"][0]["special"] = "yes";
  fs::path path = write("mistyped", "tokenizer.json", text.dump());
  std::string message = test::errorOf([&] { readTokenizerJson(path.string()); });
  EXPECT_NE(message.find(path.string() + ": added_tokens[0].special: expected true or false"),
            std::string::npos)
      << message;
  text = llama3Shaped();
  text["model"]["vocab"]["b"] = -1;
  path = write("bad_id", "tokenizer.json", text.dump());
  message = test::errorOf([&] { readTokenizerJson(path.string()); });
  EXPECT_NE(message.find("model.vocab[\"b\"]: the id is -1"), std::string::npos) << message;
  path = write("encoder", "encoder.json", R"({"a": 0})");
  message = test::errorOf([&] { readTokenizerJson(path.string()); });
  EXPECT_NE(message.find("model: missing: not a Hugging Face tokenizer.json"), std::string::npos)
      << message;
  message = test::errorOf([&] { readTokenizerJson((path.parent_path() / "none.json").string()); });
  EXPECT_NE(message.find("none.json: cannot open tokenizer.json (no such file)"), std::string::npos)
      << message;
}

TEST(TokenizerConfig, ReadsBosEosAndAddBosToken) {
  const fs::path path = write("config", "tokenizer_config.json",
                              R"({"bos_token": {"__type": "AddedToken", "content": "<s>"},
                                  "eos_token": "</s>", "add_bos_token": false,
                                  "chat_template": "{{ messages }}"})");
  const TokenizerConfig config = readTokenizerConfig(path.string());
  EXPECT_EQ(config.bosToken, "<s>");
  EXPECT_EQ(config.eosToken, "</s>");
  EXPECT_EQ(config.addBosToken, false);
  const fs::path nulls = write("config_null", "tokenizer_config.json", R"({"bos_token": null})");
  EXPECT_EQ(readTokenizerConfig(nulls.string()).bosToken, std::nullopt);
  EXPECT_EQ(readTokenizerConfig(nulls.string()).addBosToken, std::nullopt);
  const fs::path wrong = write("config_bad", "tokenizer_config.json", R"({"eos_token": 2})");
  EXPECT_NE(test::errorOf([&] { readTokenizerConfig(wrong.string()); }).find("eos_token: expected"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::formats

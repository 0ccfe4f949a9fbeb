// Strata's reader of tiktoken's rank files against tiktoken itself, on the
// files the families ship: GPT-2's gpt2.tiktoken (from openai-whisper) and
// Meta's Llama 3 tokenizer.model (from llama-models). Every text of the
// reference fixtures must give tiktoken's ids (special tokens as ordinary
// text, as encode_ordinary) and decode back.
//
// The same tokenizers exported beside a model (copyTokenizerFiles: Hugging
// Face's tokenizer.json written from the ranks) must give the same ids read
// back by Strata and by transformers' AutoTokenizer.
//
// STRATA_GPT2_REFERENCE and STRATA_LLAMA_REFERENCE name the directories the
// fixtures filled (tests/tokenizer/reference/*.py; CTest sets both).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "strata/data/tiktoken_bpe.h"
#include "strata/data/tokenizer.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const char* variable) {
  const char* dir = std::getenv(variable);
  if (!dir || !*dir)
    throw std::runtime_error(std::string(variable) + " is not set: run these tests with ctest");
  return dir;
}

struct Case {
  std::string text;
  std::vector<int64_t> ids;
};

// The cases of `file` whose "added" is false or absent: text as ordinary text.
std::vector<Case> ordinaryCases(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": missing");
  std::vector<Case> out;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("added", false)) continue;
    out.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int64_t>>()});
  }
  return out;
}

// Every case's ids and decoding, the first few differences shown.
void expectSameIds(const Tokenizer& bpe, const std::vector<Case>& cases, const char* name) {
  size_t differing = 0, notDecoded = 0, tokens = 0;
  for (const Case& c : cases) {
    const std::vector<int64_t> ours = bpe.encode(c.text);
    tokens += c.ids.size();
    if (ours != c.ids && ++differing <= 5)
      ADD_FAILURE() << name << ": ids differ from tiktoken's for " << nlohmann::json(c.text).dump();
    if (bpe.decode(c.ids) != c.text && ++notDecoded <= 5)
      ADD_FAILURE() << name << ": tiktoken's ids do not decode to "
                    << nlohmann::json(c.text).dump();
  }
  EXPECT_EQ(differing, 0u);
  EXPECT_EQ(notDecoded, 0u);
  std::cout << "[" << name << "] " << cases.size() << " texts, " << tokens << " tokens\n";
}

TEST(TiktokenReference, Gpt2sRanksGiveTiktokensIds) {
  const TiktokenBpe gpt2((fixture("STRATA_GPT2_REFERENCE") / "files" / "gpt2.tiktoken").string());
  EXPECT_EQ(gpt2.rankCount(), 50256);
  EXPECT_EQ(gpt2.vocabSize(), 50257);
  EXPECT_EQ(gpt2.endOfTextId(), 50256);
  EXPECT_EQ(gpt2.beginOfTextId(), std::nullopt);
  EXPECT_EQ(gpt2.encode("Hello world"), (std::vector<int64_t>{15496, 995}));
  EXPECT_EQ(gpt2.decode({50256}), "<|endoftext|>");
  const std::vector<Case> cases = ordinaryCases(fixture("STRATA_GPT2_REFERENCE") / "cases.jsonl");
  ASSERT_GE(cases.size(), 3000u);
  expectSameIds(gpt2, cases, "gpt2.tiktoken");
}

TEST(TiktokenReference, Llama3sTokenizerModelGivesTiktokensIds) {
  const fs::path model = fixture("STRATA_LLAMA_REFERENCE") / "llama3" / "tokenizer.model";
  const std::unique_ptr<Tokenizer> read = makeTokenizer(model.string());
  const auto* llama3 = dynamic_cast<const TiktokenBpe*>(read.get());
  ASSERT_NE(llama3, nullptr) << read->describe();
  EXPECT_EQ(llama3->rankCount(), 128000);
  EXPECT_EQ(llama3->vocabSize(), 128256);
  EXPECT_EQ(llama3->beginOfTextId(), 128000);
  EXPECT_EQ(llama3->endOfTextId(), 128001);
  EXPECT_EQ(llama3->specialId("<|eot_id|>"), 128009);
  EXPECT_EQ(llama3->specialId("<|reserved_special_token_245|>"), 128255);
  EXPECT_EQ(llama3->specialId("<|reserved_special_token_246|>"), std::nullopt);
  EXPECT_EQ(llama3->decode({128006}), "<|start_header_id|>");
  const std::vector<Case> cases =
      ordinaryCases(fixture("STRATA_LLAMA_REFERENCE") / "cases" / "llama3.jsonl");
  ASSERT_GE(cases.size(), 2000u);
  expectSameIds(*llama3, cases, "llama3 tokenizer.model");
}

// The tokenizer of `ranks` exported into a folder of its own: read back by
// Strata (its tokenizer.json) and by transformers, every case gives the same
// ids, and transformers takes `eosId` as the end of text.
void expectExportAgrees(const fs::path& ranks, const fs::path& cases, int64_t eosId,
                        const std::string& name) {
  const fs::path folder = fs::temp_directory_path() /
                          ("strata-tiktoken-export-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::vector<std::string> written = copyTokenizerFiles(ranks.string(), folder.string());
  EXPECT_EQ(written.size(), 3u);  // tokenizer.model, tokenizer.json, tokenizer_config.json
  const std::unique_ptr<Tokenizer> readBack = makeTokenizer(folder.string());
  EXPECT_EQ(readBack->endOfTextId(), eosId) << readBack->describe();
  expectSameIds(*readBack, ordinaryCases(cases), (name + " exported, read by Strata").c_str());
  const std::string command = std::string(STRATA_TEST_PYTHON) + " " + TRANSFORMERS_TOKENIZER_CHECK +
                              " " + folder.string() + " " + cases.string() + " " +
                              std::to_string(eosId);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  fs::remove_all(folder);
}

TEST(TiktokenReference, Gpt2sRanksExportedForTransformersGiveTheSameIds) {
  expectExportAgrees(fixture("STRATA_GPT2_REFERENCE") / "files" / "gpt2.tiktoken",
                     fixture("STRATA_GPT2_REFERENCE") / "cases.jsonl", 50256, "gpt2");
}

TEST(TiktokenReference, Llama3sTokenizerModelExportedForTransformersGivesTheSameIds) {
  expectExportAgrees(fixture("STRATA_LLAMA_REFERENCE") / "llama3" / "tokenizer.model",
                     fixture("STRATA_LLAMA_REFERENCE") / "cases" / "llama3.jsonl", 128001,
                     "llama3");
}

}  // namespace
}  // namespace strata::train

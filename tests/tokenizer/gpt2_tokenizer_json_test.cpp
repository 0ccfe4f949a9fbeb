// A GPT-2 tokenizer.json against the reference, tiktoken: the test writes
// GPT-2's vocabulary and merges (files/encoder.json and vocab.bpe of the
// fixture) in Hugging Face's format, with ByteLevel{use_regex} as GPT-2's
// tokenizer.json has it and the merges as ["left", "right"] pairs, and
// requires the ids of all of GPT2Reference's texts to be tiktoken's: both
// libraries take \s to be Unicode's White_Space (U+0085 in, U+FEFF out).
//
// STRATA_GPT2_REFERENCE names the directory reference_setup.sh filled.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "strata/data/hf_tokenizer.h"
#include "test_files.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

fs::path gpt2Files() {
  const char* dir = std::getenv("STRATA_GPT2_REFERENCE");
  if (!dir || !*dir) throw std::runtime_error("STRATA_GPT2_REFERENCE is not set: run with ctest");
  return fs::path(dir) / "files";
}

// GPT-2's files as tokenizer.json.
fs::path writeGpt2TokenizerJson() {
  nlohmann::json vocab;
  std::ifstream(gpt2Files() / "encoder.json") >> vocab;
  nlohmann::json merges = nlohmann::json::array();
  std::ifstream bpe(gpt2Files() / "vocab.bpe");
  std::string line;
  while (std::getline(bpe, line)) {
    if (line.rfind("#version", 0) == 0 || line.empty()) continue;
    const size_t space = line.find(' ');
    merges.push_back({line.substr(0, space), line.substr(space + 1)});
  }
  const nlohmann::json byteLevel = {{"type", "ByteLevel"},
                                    {"add_prefix_space", false},
                                    {"trim_offsets", true},
                                    {"use_regex", true}};
  const nlohmann::json file = {{"version", "1.0"},
                               {"added_tokens",
                                {{{"id", 50256},
                                  {"content", "<|endoftext|>"},
                                  {"single_word", false},
                                  {"lstrip", false},
                                  {"rstrip", false},
                                  {"normalized", true},
                                  {"special", true}}}},
                               {"normalizer", nullptr},
                               {"pre_tokenizer", byteLevel},
                               {"post_processor", byteLevel},
                               {"decoder", byteLevel},
                               {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
  const fs::path dir = test::freshDir("gpt2_json");
  test::writeFile(dir / "tokenizer.json", file.dump());
  return dir / "tokenizer.json";
}

TEST(GPT2Reference, TokenizerJsonIdsEqualTheReferenceEncoders) {
  const HfTokenizer gpt2(writeGpt2TokenizerJson().string());
  EXPECT_EQ(gpt2.vocabSize(), 50257);
  EXPECT_EQ(gpt2.mergeCount(), 50000u);
  EXPECT_EQ(gpt2.endOfTextId(), 50256);
  EXPECT_EQ(gpt2.beginOfTextId(), std::nullopt);
  EXPECT_EQ(gpt2.encode("Hello world"), (std::vector<int64_t>{15496, 995}));

  std::ifstream in(fs::path(std::getenv("STRATA_GPT2_REFERENCE")) / "cases.jsonl");
  std::string line;
  size_t texts = 0, tokens = 0, differing = 0;
  while (std::getline(in, line)) {
    const nlohmann::json c = nlohmann::json::parse(line);
    const std::string text = c.at("text").get<std::string>();
    const std::vector<int64_t> reference = c.at("ids").get<std::vector<int64_t>>();
    ++texts;
    tokens += reference.size();
    if (gpt2.encode(text) != reference && ++differing <= 5)
      ADD_FAILURE() << "ids differ for " << nlohmann::json(text).dump();
  }
  EXPECT_GE(texts, 3000u);
  EXPECT_EQ(differing, 0u);
  std::cout << "[gpt2 tokenizer.json] " << texts << " texts, " << tokens
            << " tokens equal to tiktoken's\n";
}

}  // namespace
}  // namespace strata::train

// Strata's GPT-2 tokenizer against the reference, tiktoken: on GPT-2's own
// files (files/encoder.json and vocab.bpe, which reference/gpt2_reference.py
// derives from GPT-2's ranks and checks to be OpenAI's), the token ids of a
// few thousand texts must be exactly tiktoken's, the pieces of the
// pre-tokenizer exactly those of GPT-2's pattern run by Hugging Face's
// tokenizers, and decoding must give each text back.
//
// STRATA_GPT2_REFERENCE names the directory reference_setup.sh filled (CTest
// sets it, after running that script as a fixture).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/data/gpt2_bpe.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

fs::path referenceDir() {
  const char* dir = std::getenv("STRATA_GPT2_REFERENCE");
  if (!dir || !*dir)
    throw std::runtime_error(
        "STRATA_GPT2_REFERENCE is not set: run these tests with ctest, or run "
        "tests/tokenizer/reference_setup.sh and point it at its directory");
  return dir;
}

const Gpt2Bpe& gpt2() {
  static const std::unique_ptr<Gpt2Bpe> bpe =
      Gpt2Bpe::fromDirectory((referenceDir() / "files").string());
  return *bpe;
}

struct Case {
  std::string text;
  std::vector<std::string> pieces;
  std::vector<int64_t> ids;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> out;
    std::ifstream in(referenceDir() / "cases.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      out.push_back({j.at("text").get<std::string>(),
                     j.at("pieces").get<std::vector<std::string>>(),
                     j.at("ids").get<std::vector<int64_t>>()});
    }
    return out;
  }();
  return all;
}

std::string show(const std::vector<int64_t>& ids) {
  std::ostringstream out;
  for (size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
  return out.str();
}

TEST(GPT2Reference, ReadsGpt2sOwnFiles) {
  EXPECT_EQ(gpt2().vocabSize(), 50257);
  EXPECT_EQ(gpt2().mergeCount(), 50000u);
  EXPECT_EQ(gpt2().endOfTextId(), 50256);
  // The ids every GPT-2 tokenizer gives these.
  EXPECT_EQ(gpt2().encode("Hello world"), (std::vector<int64_t>{15496, 995}));
  EXPECT_EQ(gpt2().decode({50256}), "<|endoftext|>");
}

TEST(GPT2Reference, PiecesEqualThoseOfTheReferencePattern) {
  ASSERT_GE(cases().size(), 3000u);
  size_t pieces = 0, differing = 0;
  for (const Case& c : cases()) {
    std::vector<std::string> ours;
    for (const auto& [begin, end] : gpt2Pretokenize(c.text))
      ours.push_back(c.text.substr(begin, end - begin));
    pieces += c.pieces.size();
    if (ours != c.pieces && ++differing <= 5)
      ADD_FAILURE() << "pieces differ for " << nlohmann::json(c.text).dump()
                    << "\n  ours: " << nlohmann::json(ours).dump()
                    << "\n  reference: " << nlohmann::json(c.pieces).dump();
  }
  EXPECT_EQ(differing, 0u);
  std::cout << "[gpt2] " << cases().size() << " texts, " << pieces << " pieces compared\n";
}

TEST(GPT2Reference, TokenIdsEqualTheReferenceEncodersAndDecodeBack) {
  ASSERT_GE(cases().size(), 3000u);
  size_t tokens = 0, bytes = 0, differing = 0, notDecoded = 0;
  for (const Case& c : cases()) {
    const std::vector<int64_t> ours = gpt2().encode(c.text);
    tokens += c.ids.size();
    bytes += c.text.size();
    if (ours != c.ids && ++differing <= 5)
      ADD_FAILURE() << "ids differ for " << nlohmann::json(c.text).dump()
                    << "\n  ours:      " << show(ours) << "\n  reference: " << show(c.ids);
    if (gpt2().decode(c.ids) != c.text && ++notDecoded <= 5)
      ADD_FAILURE() << "does not decode back: " << nlohmann::json(c.text).dump();
  }
  EXPECT_EQ(differing, 0u);
  EXPECT_EQ(notDecoded, 0u);
  std::cout << "[gpt2] " << cases().size() << " texts, " << bytes << " bytes, " << tokens
            << " tokens equal to tiktoken's\n";
}

}  // namespace
}  // namespace strata::train

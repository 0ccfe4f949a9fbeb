// Strata's tokenizers on Llama's own files against the canonical Python
// implementations (see reference/llama_reference.py):
//  - Llama 3's tokenizer.json (llama3/, made with Hugging Face's tokenizers
//    from Meta's tokenizer.model of llama-models, as Llama 3's published file
//    is laid out): the ids of every text must be those of tokenizers, which
//    tiktoken on Meta's file gives too, with added tokens as ordinary text
//    (encode(text)) and recognised (encode(text, kRecognised)), and decoding
//    must give each text back;
//  - a SentencePiece tokenizer.model of Llama 2's kind (Mistral 7B's, from
//    mistral-common; cases/llama2-tokenizer.model): the ids must be those of
//    Google's sentencepiece.
//
// STRATA_LLAMA_REFERENCE names the directory reference_setup.sh filled
// (CTest sets it, after running that script as a fixture).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/data/hf_tokenizer.h"
#include "strata/data/sentencepiece_tokenizer.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

fs::path referenceDir() {
  const char* dir = std::getenv("STRATA_LLAMA_REFERENCE");
  if (!dir || !*dir)
    throw std::runtime_error(
        "STRATA_LLAMA_REFERENCE is not set: run these tests with ctest, or run "
        "tests/tokenizer/reference_setup.sh and point it at its directory");
  return dir;
}

fs::path llama3Dir() { return referenceDir() / "llama3"; }

const HfTokenizer& llama3() {
  static const HfTokenizer tokenizer((llama3Dir() / "tokenizer.json").string());
  return tokenizer;
}

struct Case {
  std::string text;
  std::vector<int64_t> ids;
  bool added = false;
};

std::vector<Case> readCases(const std::string& file) {
  std::vector<Case> out;
  std::ifstream in(referenceDir() / "cases" / file);
  if (!in) throw std::runtime_error((referenceDir() / "cases" / file).string() + ": missing");
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    out.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int64_t>>(),
                   j.value("added", false)});
  }
  return out;
}

std::string show(const std::vector<int64_t>& ids) {
  std::ostringstream out;
  for (size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
  return out.str();
}

TEST(LlamaReference, ReadsLlama3sOwnFile) {
  EXPECT_EQ(llama3().vocabSize(), 128256);
  // tokenizer_config.json names BOS and EOS; the post-processor's template
  // puts the same BOS before the text.
  EXPECT_EQ(llama3().beginOfTextId(), 128000);
  EXPECT_EQ(llama3().endOfTextId(), 128001);
  EXPECT_EQ(llama3().addedTokenId("<|eot_id|>"), 128009);
  EXPECT_EQ(llama3().encode("Hello world"), (std::vector<int64_t>{9906, 1917}));
  EXPECT_EQ(llama3().decode({128000, 9906, 1917, 128001}),
            "<|begin_of_text|>Hello world<|end_of_text|>");
  // The spec forms makeTokenizer() takes: the file, and its directory.
  for (const fs::path& spec : {llama3Dir() / "tokenizer.json", llama3Dir()}) {
    std::unique_ptr<Tokenizer> viaSpec = makeTokenizer(spec.string());
    EXPECT_EQ(viaSpec->encode("Größe 12345"), llama3().encode("Größe 12345")) << spec;
    EXPECT_EQ(viaSpec->beginOfTextId(), 128000) << spec;
  }
}

TEST(LlamaReference, Llama3IdsEqualHuggingFacesAndDecodeBack) {
  const std::vector<Case> cases = readCases("llama3.jsonl");
  ASSERT_GE(cases.size(), 4000u);
  size_t texts = 0, tokens = 0, bytes = 0, differing = 0, notDecoded = 0;
  for (const Case& c : cases) {
    if (c.added) continue;
    const std::vector<int64_t> ours = llama3().encode(c.text);
    ++texts;
    tokens += c.ids.size();
    bytes += c.text.size();
    if (ours != c.ids && ++differing <= 5)
      ADD_FAILURE() << "ids differ for " << nlohmann::json(c.text).dump()
                    << "\n  ours:      " << show(ours) << "\n  reference: " << show(c.ids);
    if (llama3().decode(c.ids) != c.text && ++notDecoded <= 5)
      ADD_FAILURE() << "does not decode back: " << nlohmann::json(c.text).dump();
  }
  EXPECT_EQ(differing, 0u);
  EXPECT_EQ(notDecoded, 0u);
  std::cout << "[llama3] " << texts << " texts, " << bytes << " bytes, " << tokens
            << " tokens equal to tokenizers' and tiktoken's\n";
}

TEST(LlamaReference, Llama3AddedTokensEqualHuggingFacesWhenRecognised) {
  const std::vector<Case> cases = readCases("llama3.jsonl");
  size_t texts = 0, tokens = 0, differing = 0;
  for (const Case& c : cases) {
    if (!c.added) continue;
    const std::vector<int64_t> ours =
        llama3().encode(c.text, HfTokenizer::AddedTokens::kRecognised);
    ++texts;
    tokens += c.ids.size();
    if (ours != c.ids && ++differing <= 5)
      ADD_FAILURE() << "ids differ for " << nlohmann::json(c.text).dump()
                    << "\n  ours:      " << show(ours) << "\n  reference: " << show(c.ids);
    EXPECT_EQ(llama3().decode(ours), c.text);
  }
  EXPECT_GE(texts, 256u);  // every added token alone, and texts with them
  EXPECT_EQ(differing, 0u);
  std::cout << "[llama3] " << texts << " texts with added tokens, " << tokens
            << " tokens equal to tokenizers' and tiktoken's\n";
}

TEST(LlamaReference, Llama2SentencePieceIdsEqualSentencePieces) {
  const SentencePieceTokenizer llama2(
      (referenceDir() / "cases" / "llama2-tokenizer.model").string());
  EXPECT_EQ(llama2.vocabSize(), 32000);
  EXPECT_EQ(llama2.endOfTextId(), 2);
  const std::vector<Case> cases = readCases("llama2.jsonl");
  ASSERT_GE(cases.size(), 3500u);
  size_t tokens = 0, bytes = 0, differing = 0, notDecoded = 0;
  for (const Case& c : cases) {
    const std::vector<int64_t> ours = llama2.encode(c.text);
    tokens += c.ids.size();
    bytes += c.text.size();
    if (ours != c.ids && ++differing <= 5)
      ADD_FAILURE() << "ids differ for " << nlohmann::json(c.text).dump()
                    << "\n  ours:      " << show(ours) << "\n  reference: " << show(c.ids);
    if (llama2.decode(c.ids) != c.text && ++notDecoded <= 5)
      ADD_FAILURE() << "does not decode back: " << nlohmann::json(c.text).dump();
  }
  EXPECT_EQ(differing, 0u);
  EXPECT_EQ(notDecoded, 0u);
  std::cout << "[llama2] " << cases.size() << " texts, " << bytes << " bytes, " << tokens
            << " tokens equal to sentencepiece's\n";
}

}  // namespace
}  // namespace strata::train

// `strata data prepare` with GPT-2's BPE on GPT-2's own files (files/ of the
// directory the gpt2_reference fixture fills, named by
// STRATA_GPT2_REFERENCE): each document's ids are the tokenizer's (itself
// checked against tiktoken by GPT2Reference.*) followed by
// <|endoftext|>, in 2-byte tokens, the same for every thread count.
#include <gtest/gtest.h>

#include <cstdlib>

#include "prepared_files.h"
#include "strata/data/prepare.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"
#include "strata/train/data_source.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

std::string gpt2Dir() {
  const char* dir = std::getenv("STRATA_GPT2_REFERENCE");
  if (dir == nullptr) return "";
  return (fs::path(dir) / "files").string();
}

TEST(PrepareGpt2, TokensAreTheTokenizersWithEndOfTextBetweenDocuments) {
  const std::string gpt2 = gpt2Dir();
  ASSERT_FALSE(gpt2.empty()) << "STRATA_GPT2_REFERENCE is not set: run with ctest";
  fs::path dir = strata::test::freshDir("gpt2");
  std::vector<std::string> documents = strata::test::writeCorpus(dir / "corpus", 25);
  PrepareOptions options;
  options.tokenizer = gpt2;
  options.inputs = {(dir / "corpus").string()};
  options.output = (dir / "serial").string();
  options.threads = 1;
  prepareData(options);

  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(gpt2);
  ASSERT_EQ(tokenizer->endOfTextId(), std::optional<int64_t>(50256));
  std::vector<int64_t> ids;
  std::vector<uint64_t> starts{0};
  for (const std::string& document : documents) {
    std::vector<int64_t> piece = tokenizer->encode(document);
    ids.insert(ids.end(), piece.begin(), piece.end());
    ids.push_back(50256);
    starts.push_back(ids.size());
  }
  strata::test::RawPrepared raw = strata::test::readRaw(options.output);
  EXPECT_EQ(raw.width, 2u);
  EXPECT_EQ(raw.vocab, 50257u);
  EXPECT_EQ(raw.starts, starts);
  EXPECT_EQ(raw.ids, ids);
  EXPECT_GT(*std::max_element(ids.begin(), ids.end() - 1), 10000) << "multi-byte merges used";

  options.output = (dir / "parallel").string();
  options.threads = 4;
  prepareData(options);
  EXPECT_TRUE(strata::test::readFile(dir / "parallel.bin") ==
              strata::test::readFile(dir / "serial.bin"));
  EXPECT_TRUE(strata::test::readFile(dir / "parallel.idx") ==
              strata::test::readFile(dir / "serial.idx"));

  // Training on it with another tokenizer is refused before anything runs.
  TrainConfig config;
  config.data.prepared = (dir / "serial").string();
  config.model.vocab = 50304;
  config.train.seqLen = 16;
  try {
    makeDataSplit(config);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "serial.idx").string() +
                                         " was prepared with a vocabulary of 50257 ids"),
              std::string::npos)
        << e.what();
  }
  config.data.tokenizer = gpt2;
  EXPECT_GT(makeDataSplit(config).train.size(), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace strata::train

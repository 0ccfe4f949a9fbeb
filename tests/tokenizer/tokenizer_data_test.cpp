// The trainer's data path tokenizes with data.tokenizer.
#include <gtest/gtest.h>

#include "strata/data/sentencepiece_tokenizer.h"
#include "strata/error.h"
#include "strata/train/data_source.h"
#include "test_files.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

TEST(TokenizerData, TrainingDataIsTokenizedWithDataTokenizer) {
  fs::path dir = strata::test::freshDir("tokenizer_data");
  std::string text;
  const char* words[] = {"pipeline", "parallel", "tensor", "data", "model", "stage", "rank"};
  for (int i = 0; i < 4000; ++i)
    text += std::string(words[(i * 5 + i / 7) % 7]) + (i % 9 ? " " : ".\n");
  strata::test::writeFile(dir / "text.txt", text);
  SentencePieceTrainOptions opt;
  opt.inputs = {(dir / "text.txt").string()};
  opt.outputPrefix = (dir / "tok").string();
  opt.vocabSize = 26;
  trainSentencePiece(opt);

  TrainConfig config;
  config.data.files = {(dir / "text.txt").string()};
  config.train.seqLen = 16;
  const int64_t byteWindows = makeDataSplit(config).train.size();
  config.data.tokenizer = (dir / "tok.model").string();
  const int64_t pieceWindows = makeDataSplit(config).train.size();
  EXPECT_LT(pieceWindows * 3, byteWindows) << "whole words are single pieces";

  config.model.vocab = 20;
  try {
    makeDataSplit(config);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.vocab 20 is smaller than the vocabulary of "
                                         "data.tokenizer"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::train

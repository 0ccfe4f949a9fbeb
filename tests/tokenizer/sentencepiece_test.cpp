// SentencePiece through Strata: a tiny model trained on generated text,
// encode/decode round trips, ids equal to Debian's spm_encode command's, and
// the errors of bad models and bad training input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "strata/data/sentencepiece_tokenizer.h"
#include "strata/error.h"
#include "test_files.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using strata::test::errorOf;
using strata::test::freshDir;
using strata::test::writeFile;

// Lines of words from a few scripts, from a fixed seed: common words and
// made-up ones of a few syllables, so there is something to learn.
std::vector<std::string> generatedLines(size_t count, uint32_t seed) {
  const std::vector<std::string> words = {
      "the",    "model", "trains", "on",     "many", "devices", "pipeline", "parallel", "data",
      "tokens", "café",  "naïve",  "Straße", "東京", "世界",    "Привет",   "мир",      "42",
      "3.14",   "don't", "it's",   "(x)",    "a,b",  "👍",       "e-mail",   "über",     "niño"};
  const std::vector<std::string> syllables = {"ka",  "lo", "mi", "ne", "ru", "ta", "shi", "vo",
                                              "zen", "qu", "ar", "el", "io", "po", "sa",  "di"};
  std::mt19937 rng(seed);
  std::vector<std::string> lines;
  for (size_t i = 0; i < count; ++i) {
    std::string line;
    const size_t n = 3 + rng() % 12;
    for (size_t w = 0; w < n; ++w) {
      line += w ? " " : "";
      if (rng() % 2) {
        line += words[rng() % words.size()];
      } else {
        for (size_t s = 1 + rng() % 3; s > 0; --s) line += syllables[rng() % syllables.size()];
      }
    }
    lines.push_back(line);
  }
  return lines;
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// A model trained once for the tests that only use one.
struct TrainedModel {
  fs::path dir, model;
};
const TrainedModel& unigramModel() {
  static const TrainedModel trained = [] {
    TrainedModel t;
    t.dir = freshDir("spm_unigram");
    writeFile(t.dir / "train.txt", joinLines(generatedLines(2000, 1)));
    SentencePieceTrainOptions opt;
    opt.inputs = {(t.dir / "train.txt").string()};
    opt.outputPrefix = (t.dir / "tok").string();
    opt.vocabSize = 200;
    opt.characterCoverage = 1.0;
    trainSentencePiece(opt);
    t.model = t.dir / "tok.model";
    return t;
  }();
  return trained;
}

TEST(SentencePiece, TrainsAModelAndItsVocabularyFile) {
  const TrainedModel& t = unigramModel();
  EXPECT_TRUE(fs::exists(t.model));
  EXPECT_TRUE(fs::exists(t.dir / "tok.vocab"));
  SentencePieceTokenizer tokenizer(t.model.string());
  EXPECT_EQ(tokenizer.vocabSize(), 200);
  EXPECT_EQ(tokenizer.endOfTextId(), 2);  // SentencePiece's default </s>
  std::unique_ptr<Tokenizer> viaSpec = makeTokenizer(t.model.string());
  EXPECT_EQ(viaSpec->vocabSize(), 200);
}

TEST(SentencePiece, EncodesAndDecodesBack) {
  SentencePieceTokenizer tokenizer(unigramModel().model.string());
  size_t tokens = 0;
  for (const std::string& line : generatedLines(200, 2)) {
    std::vector<int64_t> ids = tokenizer.encode(line);
    tokens += ids.size();
    EXPECT_LT(ids.size(), line.size()) << line;  // pieces longer than a byte
    for (int64_t id : ids) EXPECT_NE(id, 0) << "<unk> in " << line;
    EXPECT_EQ(tokenizer.decode(ids), line);
  }
  std::cout << "[sentencepiece] 200 lines, " << tokens << " tokens round-tripped\n";
  EXPECT_THROW(tokenizer.decode({200}), ConfigError);
  EXPECT_THROW(tokenizer.encode("ok \xff"), ConfigError);
}

// The ids Debian's spm_encode gives for each line of `input`.
std::vector<std::vector<int64_t>> spmEncode(const fs::path& model, const fs::path& input) {
  const fs::path output = input.string() + ".ids";
  const std::string command = "spm_encode --model='" + model.string() + "' --output_format=id < '" +
                              input.string() + "' > '" + output.string() + "'";
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  std::vector<std::vector<int64_t>> lines;
  std::ifstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<int64_t> ids;
    for (int64_t id; words >> id;) ids.push_back(id);
    lines.push_back(ids);
  }
  return lines;
}

void expectIdsOfSpmEncode(const fs::path& model, const std::string& what) {
  if (std::system("command -v spm_encode >/dev/null") != 0)
    GTEST_SKIP() << "spm_encode is not installed (Debian's sentencepiece; scripts/setup.sh)";
  SentencePieceTokenizer tokenizer(model.string());
  std::vector<std::string> lines = generatedLines(500, 3);
  const fs::path input = model.parent_path() / "compare.txt";
  writeFile(input, joinLines(lines));
  std::vector<std::vector<int64_t>> reference = spmEncode(model, input);
  ASSERT_EQ(reference.size(), lines.size());
  size_t tokens = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(tokenizer.encode(lines[i]), reference[i]) << lines[i];
    tokens += reference[i].size();
  }
  std::cout << "[sentencepiece] " << what << ": " << lines.size() << " lines, " << tokens
            << " tokens equal to spm_encode's\n";
}

TEST(SentencePiece, IdsEqualThoseOfSpmEncode) {
  expectIdsOfSpmEncode(unigramModel().model, "unigram");
}

TEST(SentencePiece, BpeModelsToo) {
  fs::path dir = freshDir("spm_bpe");
  writeFile(dir / "train.txt", joinLines(generatedLines(2000, 4)));
  SentencePieceTrainOptions opt;
  opt.inputs = {(dir / "train.txt").string()};
  opt.outputPrefix = (dir / "bpe").string();
  opt.vocabSize = 500;  // 256 byte pieces and the rest
  opt.modelType = "bpe";
  opt.byteFallback = true;
  trainSentencePiece(opt);
  SentencePieceTokenizer tokenizer((dir / "bpe.model").string());
  // Byte fallback spells an unseen character as bytes, which decode back.
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("the Ω model")), "the Ω model");
  expectIdsOfSpmEncode(dir / "bpe.model", "bpe");
}

TEST(SentencePiece, AFileThatIsNotAModelIsNamed) {
  fs::path dir = freshDir("spm_bad");
  writeFile(dir / "text.model", "this is plain text, not a model\n");
  std::string message = errorOf([&] { SentencePieceTokenizer((dir / "text.model").string()); });
  EXPECT_NE(message.find((dir / "text.model").string() + ": not a SentencePiece model"),
            std::string::npos)
      << message;
  writeFile(dir / "empty.model", "");
  message = errorOf([&] { makeTokenizer((dir / "empty.model").string()); });
  EXPECT_NE(message.find("empty.model: not a SentencePiece model"), std::string::npos) << message;
  message = errorOf([&] { SentencePieceTokenizer((dir / "absent.model").string()); });
  EXPECT_NE(message.find("absent.model"), std::string::npos) << message;
}

TEST(SentencePiece, BadTrainingInputIsNamed) {
  fs::path dir = freshDir("spm_bad_input");
  SentencePieceTrainOptions opt;
  opt.inputs = {(dir / "absent.txt").string()};
  opt.outputPrefix = (dir / "tok").string();
  std::string message = errorOf([&] { trainSentencePiece(opt); });
  EXPECT_NE(message.find((dir / "absent.txt").string() + ": cannot open"), std::string::npos)
      << message;
  writeFile(dir / "small.txt", "a tiny text\n");
  opt.inputs = {(dir / "small.txt").string()};
  opt.vocabSize = 5000;
  message = errorOf([&] { trainSentencePiece(opt); });
  EXPECT_NE(message.find("Vocabulary size too high"), std::string::npos) << message;
  EXPECT_NE(message.find("small.txt"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata::train

// tiktoken rank files that Strata must refuse, each naming the file and,
// where one is to blame, the line; and a tokenizer.model in tiktoken's
// format told from SentencePiece's by its content. Real files (GPT-2's and
// Llama 3's ranks) are checked against tiktoken itself in
// tiktoken_reference_test.cpp.
#include <gtest/gtest.h>

#include "strata/data/tiktoken_bpe.h"
#include "test_files.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using strata::test::errorOf;

// Base64 of `bytes`, written here from RFC 4648 rather than taken from Strata.
std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 2]);
    for (size_t k = 0; k < 4; ++k)
      out += k <= bytes.size() - i ? alphabet[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

// The 256 single bytes, ranked by their value.
std::string byteRanks() {
  std::string lines;
  for (int b = 0; b < 256; ++b)
    lines += base64(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  return lines;
}

// The message TiktokenBpe gives for a file holding `text`, with the file's
// path replaced by FILE.
std::string refusal(const std::string& text, const std::string& name = "ranks.tiktoken") {
  const fs::path file = strata::test::freshDir("tiktoken") / name;
  strata::test::writeFile(file, text);
  std::string message = errorOf([&] { TiktokenBpe bpe(file.string()); });
  for (size_t at; (at = message.find(file.string())) != std::string::npos;)
    message.replace(at, file.string().size(), "FILE");
  return message;
}

TEST(Tiktoken, TheTestsBase64IsRfc4648s) {
  EXPECT_EQ(base64("A"), "QQ==");
  EXPECT_EQ(base64("AB"), "QUI=");
  EXPECT_EQ(base64("ABC"), "QUJD");
  EXPECT_EQ(base64(" the"), "IHRoZQ==");
}

TEST(Tiktoken, RefusesALineThatIsNotBase64AndARank) {
  EXPECT_EQ(refusal("QQ== 0\nQg==\n"),
            "FILE:2: expected \"BASE64 RANK\" (a token's bytes in base64, a space, its rank), got "
            "\"Qg==\"");
  EXPECT_EQ(refusal("QQ== 0 7\n"),
            "FILE:1: expected \"BASE64 RANK\" (a token's bytes in base64, a space, its rank), got "
            "\"QQ== 0 7\"");
}

TEST(Tiktoken, RefusesBase64ThatDoesNotDecode) {
  EXPECT_EQ(refusal("QQ== 0\nQ!== 1\n"), "FILE:2: \"Q!==\" is not base64");
  EXPECT_EQ(refusal("QQ== 0\nQUJ 1\n"), "FILE:2: \"QUJ\" is not base64");
}

TEST(Tiktoken, RefusesARankThatIsNotANonNegativeInteger) {
  EXPECT_EQ(refusal("QQ== -1\n"), "FILE:1: the rank \"-1\" is not a non-negative integer");
  EXPECT_EQ(refusal("QQ== 0\nQg== 1x\n"), "FILE:2: the rank \"1x\" is not a non-negative integer");
}

TEST(Tiktoken, RefusesARankGivenTwice) {
  EXPECT_EQ(refusal("QQ== 0\nQg== 1\nQw== 1\n"), "FILE:3: rank 1 again (line 2 has it)");
}

TEST(Tiktoken, RefusesATokenGivenTwice) {
  EXPECT_EQ(refusal("QQ== 0\nQg== 1\nQQ== 2\n"),
            "FILE:3: the token of line 1 again (each token has one rank)");
}

TEST(Tiktoken, RefusesAGapInTheRanks) {
  EXPECT_EQ(refusal("QQ== 0\nQg== 1\nQw== 3\n"),
            "FILE: rank 2 is missing (the ranks run from 0 without a gap; line 3 has rank 3)");
}

TEST(Tiktoken, RefusesAnEmptyFile) {
  EXPECT_EQ(refusal(""), "FILE: no ranks (an empty tiktoken file)");
}

TEST(Tiktoken, RefusesAFamilyItDoesNotKnow) {
  EXPECT_EQ(refusal(byteRanks()),
            "FILE: a tiktoken file of 256 ranks is neither GPT-2's (50256, gpt2.tiktoken) nor "
            "Llama 3's (128000, tokenizer.model); those are the families whose pattern and "
            "special tokens Strata knows");
}

TEST(Tiktoken, ATokenizerModelInTiktokensFormatIsReadAsOne) {
  const fs::path dir = strata::test::freshDir("tiktoken_model");
  strata::test::writeFile(dir / "tokenizer.model", byteRanks());
  EXPECT_TRUE(looksLikeTiktoken((dir / "tokenizer.model").string()));
  // Read as tiktoken's ranks, not as a SentencePiece model.
  EXPECT_NE(errorOf([&] {
              makeTokenizer((dir / "tokenizer.model").string());
            }).find("a tiktoken file of 256 ranks"),
            std::string::npos);
  strata::test::writeFile(dir / "sentencepiece.model", std::string("\x0a\x09\x0a\x05<unk>", 9));
  EXPECT_FALSE(looksLikeTiktoken((dir / "sentencepiece.model").string()));
}

}  // namespace
}  // namespace strata::train

// GPT-2's byte-level BPE on small vocabularies written by the test: the
// pre-tokenizer's pattern, merge order, file errors. GPT2Reference.* checks it
// against the reference encoder on GPT-2's real files.
#include "strata/data/gpt2_bpe.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/data/tokenizer.h"
#include "strata/error.h"
#include "test_files.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using strata::test::errorOf;
using strata::test::freshDir;
using strata::test::spell;
using strata::test::writeFile;

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A vocabulary of the 256 bytes (id = byte) plus `extra` tokens (ids 256...),
// and a merges file of `merges` lines after the version line.
fs::path writeVocabulary(const std::string& name, const std::vector<std::string>& extra,
                         const std::string& merges) {
  fs::path dir = freshDir(name);
  std::string json = "{";
  for (int b = 0; b < 256; ++b)
    json += (b ? ", " : "") + jsonString(spell(std::string(1, static_cast<char>(b)))) + ": " +
            std::to_string(b);
  for (size_t i = 0; i < extra.size(); ++i)
    json += ", " + jsonString(spell(extra[i])) + ": " + std::to_string(256 + i);
  json += ", \"<|endoftext|>\": " + std::to_string(256 + extra.size()) + "}";
  writeFile(dir / "encoder.json", json);
  writeFile(dir / "vocab.bpe", "#version: 0.2\n" + merges);
  return dir;
}

std::vector<std::string> pieces(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [begin, end] : gpt2Pretokenize(text))
    out.push_back(text.substr(begin, end - begin));
  return out;
}

using Pieces = std::vector<std::string>;

TEST(Gpt2Pretokenize, SplitsWordsNumbersAndPunctuationWithTheirLeadingSpace) {
  EXPECT_EQ(pieces("Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(pieces("It's 42, isn't it?!"),
            (Pieces{"It", "'s", " 42", ",", " isn", "'t", " it", "?!"}));
  EXPECT_EQ(pieces("abc123def"), (Pieces{"abc", "123", "def"}));
  EXPECT_EQ(pieces("they're we've I'm you'll he'd"),
            (Pieces{"they", "'re", " we", "'ve", " I", "'m", " you", "'ll", " he", "'d"}));
  // Contractions are lower-case only; an apostrophe after punctuation joins it.
  EXPECT_EQ(pieces("DON'T !'s"), (Pieces{"DON", "'", "T", " !'", "s"}));
}

TEST(Gpt2Pretokenize, LeavesTheLastSpaceOfARunToTheNextWord) {
  EXPECT_EQ(pieces("a   b"), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(pieces("a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  EXPECT_EQ(pieces("a \n b"), (Pieces{"a", " \n", " b"}));
  EXPECT_EQ(pieces("end  "), (Pieces{"end", "  "}));
  EXPECT_EQ(pieces("  "), (Pieces{"  "}));
  EXPECT_EQ(pieces("\tx"), (Pieces{"\t", "x"}));
  // Only U+0020 leads a word; other spaces stand alone.
  EXPECT_EQ(pieces("a\u00a0b"), (Pieces{"a", "\u00a0", "b"}));
  EXPECT_EQ(pieces("a\u3000\u3000b"), (Pieces{"a", "\u3000", "\u3000", "b"}));
}

TEST(Gpt2Pretokenize, UsesUnicodeLettersNumbersAndJavaScriptWhiteSpace) {
  EXPECT_EQ(pieces("café Straße 東京"), (Pieces{"café", " Straße", " 東京"}));
  // Combining marks are neither letters nor numbers.
  EXPECT_EQ(pieces("cafe\u0301!"), (Pieces{"cafe", "\u0301!"}));
  // Other numbers and letter numbers are numbers; astral-plane letters are letters.
  EXPECT_EQ(pieces("x² Ⅻ 𝔘𝔫𝔦"), (Pieces{"x", "²", " Ⅻ", " 𝔘𝔫𝔦"}));
  // U+0085 and U+200B are not white space in JavaScript; U+FEFF and U+2028 are.
  EXPECT_EQ(pieces("a\u0085b\u200bc"), (Pieces{"a", "\u0085", "b", "\u200b", "c"}));
  EXPECT_EQ(pieces("a\ufeff\u2028b"), (Pieces{"a", "\ufeff", "\u2028", "b"}));
  EXPECT_EQ(pieces("👍🏽 ok"), (Pieces{"👍🏽", " ok"}));
}

TEST(Gpt2Pretokenize, RefusesTextThatIsNotUtf8NamingTheOffset) {
  try {
    gpt2Pretokenize("abc\xff");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("byte offset 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpt2Pretokenize("\xc3"), ConfigError);          // cut short
  EXPECT_THROW(gpt2Pretokenize("\xc0\x80"), ConfigError);      // overlong
  EXPECT_THROW(gpt2Pretokenize("\xed\xa0\x80"), ConfigError);  // a surrogate
}

TEST(Gpt2Bpe, MergesTheLowestRankedPairFirst) {
  // "abc": with "b c" ranked first it is a|bc, with "a b" first ab|c.
  fs::path bcFirst = writeVocabulary("bc_first", {"ab", "bc"}, "b c\na b\n");
  Gpt2Bpe one((bcFirst / "encoder.json").string(), (bcFirst / "vocab.bpe").string());
  EXPECT_EQ(one.encode("abc"), (std::vector<int64_t>{'a', 257}));
  fs::path abFirst = writeVocabulary("ab_first", {"ab", "bc"}, "a b\nb c\n");
  Gpt2Bpe two((abFirst / "encoder.json").string(), (abFirst / "vocab.bpe").string());
  EXPECT_EQ(two.encode("abc"), (std::vector<int64_t>{256, 'c'}));
  EXPECT_EQ(two.mergeCount(), 2u);
  EXPECT_EQ(two.vocabSize(), 259);
  EXPECT_EQ(two.endOfTextId(), 258);
}

TEST(Gpt2Bpe, MergesEveryOccurrenceAndBuildsOnEarlierMerges) {
  fs::path dir = writeVocabulary("chain", {"aa", "aaaa", " a", " aa"}, "a a\naa aa\nĠ a\nĠa a\n");
  std::unique_ptr<Gpt2Bpe> bpe = Gpt2Bpe::fromDirectory(dir.string());
  // "aaaaa" -> aa aa a -> aaaa a; in " aaa", "a a" ranks before "Ġ a".
  EXPECT_EQ(bpe->encode("aaaaa"), (std::vector<int64_t>{257, 'a'}));
  EXPECT_EQ(bpe->encode("x aaa"), (std::vector<int64_t>{'x', ' ', 256, 'a'}));
  EXPECT_EQ(bpe->encode(" a"), (std::vector<int64_t>{258}));
}

TEST(Gpt2Bpe, EncodesAnyUtf8TextAndDecodesItBack) {
  fs::path dir = writeVocabulary("round_trip", {"he", "hel"}, "h e\nhe l\n");
  Gpt2Bpe bpe((dir / "encoder.json").string(), (dir / "vocab.bpe").string());
  for (const std::string text : {"hello", "", " \n\t ", "naïve 東京 👍🏽", "a\u00a0b\r\n"}) {
    std::vector<int64_t> ids = bpe.encode(text);
    EXPECT_EQ(bpe.decode(ids), text);
  }
  EXPECT_EQ(bpe.encode("hello")[0], 257);
  EXPECT_EQ(bpe.decode({258}), "<|endoftext|>");
  EXPECT_THROW(bpe.decode({259}), ConfigError);
  EXPECT_THROW(bpe.decode({-1}), ConfigError);
  EXPECT_THROW(bpe.encode("\x80"), ConfigError);
}

// Export's copy of OpenAI's files takes Hugging Face's names.
TEST(Gpt2Bpe, CopiedUnderHuggingFaceNames) {
  fs::path dir = writeVocabulary("copy_openai", {"ab"}, "a b\n");
  fs::path weights = freshDir("copy_openai_weights");
  std::vector<std::string> written = copyTokenizerFiles(dir.string(), weights.string());
  EXPECT_EQ(written, (std::vector<std::string>{(weights / "vocab.json").string(),
                                               (weights / "merges.txt").string()}));
  EXPECT_EQ(tokenizerIn(weights.string()), weights.string());
  EXPECT_EQ(makeTokenizer(weights.string())->encode("ab"), (std::vector<int64_t>{256}));
}

TEST(Gpt2Bpe, ReadsHuggingFaceFileNames) {
  fs::path dir = writeVocabulary("hf_names", {"ab"}, "a b\n");
  fs::rename(dir / "encoder.json", dir / "vocab.json");
  fs::rename(dir / "vocab.bpe", dir / "merges.txt");
  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(dir.string());
  EXPECT_EQ(tokenizer->encode("ab"), (std::vector<int64_t>{256}));
  EXPECT_NE(tokenizer->describe().find("merges.txt"), std::string::npos);
}

// The message of the ConfigError `f` throws.
TEST(Gpt2Bpe, MissingFilesAreNamed) {
  fs::path dir = writeVocabulary("missing", {}, "");
  fs::remove(dir / "encoder.json");
  std::string message = errorOf([&] { Gpt2Bpe::fromDirectory(dir.string()); });
  EXPECT_NE(message.find((dir / "encoder.json").string() + ": not found"), std::string::npos)
      << message;
  dir = writeVocabulary("missing_merges", {}, "");
  fs::remove(dir / "vocab.bpe");
  message = errorOf([&] { makeTokenizer(dir.string()); });
  EXPECT_NE(message.find((dir / "vocab.bpe").string() + ": not found"), std::string::npos)
      << message;
  message = errorOf([&] { makeTokenizer((dir / "nothing_here").string()); });
  EXPECT_NE(message.find("nothing_here"), std::string::npos) << message;
}

TEST(Gpt2Bpe, MalformedFilesAreNamedWithTheLine) {
  fs::path dir = writeVocabulary("bad_line", {"ab"}, "a b\nab\n");
  std::string message = errorOf([&] { Gpt2Bpe::fromDirectory(dir.string()); });
  EXPECT_NE(message.find((dir / "vocab.bpe").string() + ":3: expected a merge"), std::string::npos)
      << message;
  dir = writeVocabulary("three_words", {"ab"}, "a b c\n");
  message = errorOf([&] { Gpt2Bpe::fromDirectory(dir.string()); });
  EXPECT_NE(message.find("vocab.bpe:2:"), std::string::npos) << message;
  dir = writeVocabulary("unknown_result", {}, "a b\n");
  message = errorOf([&] { Gpt2Bpe::fromDirectory(dir.string()); });
  EXPECT_NE(message.find("vocab.bpe:2: \"ab\" is not in"), std::string::npos) << message;
  dir = writeVocabulary("not_json", {}, "");
  writeFile(dir / "encoder.json", "{\"a\": 1,");
  message = errorOf([&] { Gpt2Bpe::fromDirectory(dir.string()); });
  EXPECT_NE(message.find((dir / "encoder.json").string() + ": not valid JSON"), std::string::npos)
      << message;
  writeFile(dir / "encoder.json", "{\"a\": 0}");
  message = errorOf([&] { Gpt2Bpe::fromDirectory(dir.string()); });
  EXPECT_NE(message.find("encoder.json: no token for byte 0x0"), std::string::npos) << message;
}

TEST(Tokenizers, ByteIsTheDefaultForTinyDemos) {
  std::unique_ptr<Tokenizer> byte = makeTokenizer("byte");
  EXPECT_EQ(byte->vocabSize(), 256);
  EXPECT_EQ(byte->encode("hé"), (std::vector<int64_t>{'h', 0xC3, 0xA9}));
  EXPECT_EQ(byte->decode({'h', 0xC3, 0xA9}), "hé");
  EXPECT_EQ(byte->endOfTextId(), std::nullopt);
  EXPECT_THROW(makeTokenizer(""), ConfigError);
}

}  // namespace
}  // namespace strata::train

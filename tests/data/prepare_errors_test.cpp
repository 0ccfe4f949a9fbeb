// Every bad input of `strata data prepare` and of a prepared dataset is a
// ConfigError naming the file and, where there is one, the byte offset.
#include <gtest/gtest.h>

#include <functional>

#include "prepared_files.h"
#include "strata/data/prepare.h"
#include "strata/data/prepared_data.h"
#include "strata/error.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using strata::test::writeFile;

void expectError(const std::function<void()>& run, const std::vector<std::string>& parts) {
  try {
    run();
    FAIL() << "no error; expected one naming " << parts.front();
  } catch (const ConfigError& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' missing from: " << e.what();
  }
}

void prepareInto(const std::vector<std::string>& inputs, const std::string& output,
                 const std::string& tokenizer = "byte", int width = 0) {
  PrepareOptions options;
  options.inputs = inputs;
  options.output = output;
  options.tokenizer = tokenizer;
  options.tokenWidth = width;
  prepareData(options);
}

TEST(PrepareErrors, EmptyInputs) {
  fs::path dir = strata::test::freshDir("empty");
  fs::create_directories(dir / "none");
  writeFile(dir / "hidden" / ".only.txt", "skipped");
  std::string out = (dir / "out").string();
  expectError([&] { prepareInto({(dir / "none").string()}, out); }, {"no input files"});
  expectError([&] { prepareInto({(dir / "hidden").string()}, out); }, {"no input files"});
  writeFile(dir / "empty.txt", "");
  expectError([&] { prepareInto({(dir / "empty.txt").string()}, out); },
              {(dir / "empty.txt").string() + ": empty file"});
  writeFile(dir / "blank.jsonl", "\n  \n");
  expectError([&] { prepareInto({(dir / "blank.jsonl").string()}, out); },
              {(dir / "blank.jsonl").string(), "no JSON lines"});
  expectError([&] { prepareInto({(dir / "missing.txt").string()}, out); },
              {(dir / "missing.txt").string(), "no such file"});
  EXPECT_FALSE(fs::exists(out + ".bin"));
  EXPECT_FALSE(fs::exists(out + ".bin.partial"));
  fs::remove_all(dir);
}

TEST(PrepareErrors, NotUtf8NamesFileAndOffset) {
  fs::path dir = strata::test::freshDir("utf8");
  writeFile(dir / "in" / "a.txt", "fine text\n");
  writeFile(dir / "in" / "b.txt", "caf\xc3\xa9 then \xc3(");
  writeFile(dir / "lines.jsonl", "{\"text\": \"ok\"}\n{\"text\": \"\xff\"}\n");
  std::string out = (dir / "out").string();
  expectError([&] { prepareInto({(dir / "in").string()}, out); },
              {(dir / "in" / "b.txt").string() + " at byte offset 11: not UTF-8"});
  expectError([&] { prepareInto({(dir / "lines.jsonl").string()}, out); },
              {(dir / "lines.jsonl").string() + " at byte offset 25: not UTF-8"});
  fs::remove_all(dir);
}

TEST(PrepareErrors, BadJsonLineNamesLineAndOffset) {
  fs::path dir = strata::test::freshDir("json");
  writeFile(dir / "a.jsonl", "{\"text\": \"ok\"}\n{\"text\": 3}\n");
  writeFile(dir / "b.jsonl", "{\"text\": \"ok\"}\n\n{\"text\": \"cut\n");
  writeFile(dir / "c.jsonl", "{\"text\": \"\\ud800 lone surrogate\"}\n");
  std::string out = (dir / "out").string();
  expectError([&] { prepareInto({(dir / "a.jsonl").string()}, out); },
              {(dir / "a.jsonl").string() + ":2 (byte offset 15)", "\"text\" string"});
  expectError([&] { prepareInto({(dir / "b.jsonl").string()}, out); },
              {(dir / "b.jsonl").string() + ":3 (byte offset 16)", "not a JSON line"});
  expectError([&] { prepareInto({(dir / "c.jsonl").string()}, out); },
              {(dir / "c.jsonl").string() + ":1 (byte offset 0)", "not a JSON line"});
  fs::remove_all(dir);
}

// A GPT-2 vocabulary of 70000 ids: the 256 bytes (in GPT-2's spelling,
// written here from its definition), made-up tokens and <|endoftext|> last,
// no merges.
fs::path writeLargeVocabulary(const fs::path& dir) {
  std::string json = "{";
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    int cp = b;
    if (!printable) {
      cp = 256;
      for (int c = 0; c < b; ++c)
        if (!((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE)) ++cp;
    }
    std::string spelled;
    if (cp < 0x80) {
      spelled = cp == '"' ? "\\\"" : cp == '\\' ? "\\\\" : std::string(1, char(cp));
    } else {
      spelled += static_cast<char>(0xC0 | (cp >> 6));
      spelled += static_cast<char>(0x80 | (cp & 0x3F));
    }
    json += (b ? ", \"" : "\"") + spelled + "\": " + std::to_string(b);
  }
  for (int id = 256; id < 69999; ++id)
    json += ", \"tok" + std::to_string(id) + "\": " + std::to_string(id);
  writeFile(dir / "encoder.json", json + ", \"<|endoftext|>\": 69999}");
  writeFile(dir / "vocab.bpe", "#version: 0.2\n");
  return dir;
}

TEST(PrepareErrors, VocabularyTooLargeForTheTokenWidth) {
  fs::path dir = strata::test::freshDir("vocab");
  std::string large = writeLargeVocabulary(dir / "large").string();
  writeFile(dir / "a.txt", "hi there");
  std::string out = (dir / "out").string();
  expectError([&] { prepareInto({(dir / "a.txt").string()}, out, large, 2); },
              {"70000 ids, too many for 2-byte tokens"});
  prepareInto({(dir / "a.txt").string()}, out, large);  // chooses 4 bytes
  strata::test::RawPrepared raw = strata::test::readRaw(out);
  EXPECT_EQ(raw.width, 4u);
  EXPECT_EQ(raw.vocab, 70000u);
  ASSERT_EQ(raw.ids.size(), 8u + 1u);  // no merges: a token a byte, then <|endoftext|>
  EXPECT_EQ(raw.ids.back(), 69999);
  fs::remove_all(dir);
}

// A good prepared dataset to break.
std::string goodPrepared(const fs::path& dir) {
  writeFile(dir / "in" / "a.txt", "first document");
  writeFile(dir / "in" / "b.txt", "second one");
  prepareInto({(dir / "in").string()}, (dir / "data").string());
  return (dir / "data").string();
}

void overwrite(const std::string& path, size_t offset, const std::string& bytes) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void truncateTo(const std::string& path, uintmax_t size) { fs::resize_file(path, size); }

TEST(PreparedDataErrors, CorruptOrTruncatedIndexOrTokensNameFileAndOffset) {
  fs::path dir = strata::test::freshDir("corrupt");
  const std::string prefix = goodPrepared(dir);
  const std::string idx = prefix + ".idx", bin = prefix + ".bin";
  const std::string goodIdx = strata::test::readFile(idx), goodBin = strata::test::readFile(bin);
  auto restore = [&] {
    writeFile(idx, goodIdx);
    writeFile(bin, goodBin);
  };
  auto open = [&] { PreparedData data(prefix); };
  open();

  overwrite(idx, 80, "\x07");  // document 1's start
  expectError(open, {idx + " at byte offset 40: checksum mismatch"});
  restore();
  overwrite(idx, 0, "XTRTOKIX");
  expectError(open, {idx + " at byte offset 0: not a Strata token index"});
  restore();
  overwrite(idx, 8, std::string("\x02\0\0\0", 4));
  expectError(open, {idx + " at byte offset 8: index version 2"});
  restore();
  overwrite(idx, 12, std::string("\x03\0\0\0", 4));
  expectError(open, {idx + " at byte offset 12: token width 3"});
  restore();
  truncateTo(idx, goodIdx.size() - 8);
  expectError(open, {idx + ": " + std::to_string(goodIdx.size() - 8) + " bytes", "truncated"});
  restore();
  truncateTo(idx, 30);
  expectError(open, {idx + ": 30 bytes", "truncated at byte offset 30"});
  restore();
  truncateTo(bin, goodBin.size() - 4);
  expectError(open, {bin + ": " + std::to_string(goodBin.size() - 4) + " bytes",
                     "truncated at byte offset " + std::to_string(goodBin.size() - 4)});
  restore();
  fs::remove(idx);
  expectError(open, {idx + ": cannot open"});
  restore();

  overwrite(bin, 6, std::string("\x00\x01", 2));  // token 3 = 256, outside the bytes' 256
  PreparedData data(prefix);
  std::vector<int64_t> ids(24);
  expectError([&] { data.read(0, 24, ids.data()); },
              {bin + " at byte offset 6: token 256 is outside the vocabulary of 256"});
  expectError([&] { data.read(20, 5, ids.data()); }, {bin, "[20, 25) are outside [0, 24)"});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace strata::train

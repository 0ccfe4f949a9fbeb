// `strata data prepare` with the byte tokenizer against the documents the
// test wrote, read back by the test's own reader of the format; the same
// bytes for every thread count; Strata's reader agrees with the test's.
#include "strata/data/prepare.h"

#include <gtest/gtest.h>

#include "prepared_files.h"
#include "strata/data/prepared_data.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using strata::test::RawPrepared;
using strata::test::readFile;
using strata::test::readRaw;

PrepareSummary prepare(const fs::path& input, const fs::path& output, int threads, int width = 0) {
  PrepareOptions options;
  options.inputs = {input.string()};
  options.output = output.string();
  options.threads = threads;
  options.tokenWidth = width;
  return prepareData(options);
}

// The byte tokenizer's ids of `documents` (no end-of-text id), concatenated,
// and where each document starts.
void expectBytesOf(const std::vector<std::string>& documents, const RawPrepared& raw) {
  std::vector<int64_t> ids;
  std::vector<uint64_t> starts{0};
  for (const std::string& document : documents) {
    for (unsigned char byte : document) ids.push_back(byte);
    starts.push_back(ids.size());
  }
  EXPECT_EQ(raw.version, 1u);
  EXPECT_EQ(raw.vocab, 256u);
  EXPECT_EQ(raw.documents, documents.size());
  EXPECT_EQ(raw.tokens, ids.size());
  EXPECT_EQ(raw.starts, starts);
  EXPECT_EQ(raw.ids, ids);
}

TEST(PrepareData, ByteTokensAndDocumentBoundariesEqualTheDocuments) {
  fs::path dir = strata::test::freshDir("bytes");
  std::vector<std::string> documents = strata::test::writeCorpus(dir / "corpus", 14);
  PrepareSummary summary = prepare(dir / "corpus", dir / "out" / "data", 1);
  RawPrepared raw = readRaw((dir / "out" / "data").string());
  EXPECT_EQ(raw.width, 2u);
  expectBytesOf(documents, raw);
  EXPECT_EQ(summary.files, 14);
  EXPECT_EQ(summary.documents, static_cast<int64_t>(documents.size()));

  PreparedData data((dir / "out" / "data").string());
  ASSERT_EQ(data.tokens(), static_cast<int64_t>(raw.ids.size()));
  std::vector<int64_t> read(raw.ids.size());
  data.read(0, data.tokens(), read.data());
  EXPECT_EQ(read, raw.ids);
  for (int64_t d = 0; d <= data.documents(); ++d)
    EXPECT_EQ(data.documentStart(d), static_cast<int64_t>(raw.starts[size_t(d)]));
  fs::remove_all(dir);
}

TEST(PrepareData, FourByteTokensWhenAsked) {
  fs::path dir = strata::test::freshDir("wide");
  std::vector<std::string> documents = strata::test::writeCorpus(dir / "corpus", 5);
  prepare(dir / "corpus", dir / "wide", 2, 4);
  RawPrepared raw = readRaw((dir / "wide").string());
  EXPECT_EQ(raw.width, 4u);
  expectBytesOf(documents, raw);
  PreparedData data((dir / "wide").string());
  std::vector<int64_t> read(raw.ids.size());
  data.read(0, data.tokens(), read.data());
  EXPECT_EQ(read, raw.ids);
  fs::remove_all(dir);
}

// Files of very different sizes, so threads finish out of order; the output
// must be the same bytes for every thread count.
TEST(PrepareData, SameBytesForEveryThreadCount) {
  fs::path dir = strata::test::freshDir("threads");
  std::vector<std::string> documents = strata::test::writeCorpus(dir / "corpus", 40, 4 << 20);
  prepare(dir / "corpus", dir / "serial", 1);
  const std::string bin = readFile(dir / "serial.bin"), idx = readFile(dir / "serial.idx");
  expectBytesOf(documents, readRaw((dir / "serial").string()));
  for (int threads : {2, 3, 8}) {
    fs::path out = dir / ("t" + std::to_string(threads));
    prepare(dir / "corpus", out, threads);
    EXPECT_TRUE(readFile(out.string() + ".bin") == bin) << threads << " threads";
    EXPECT_TRUE(readFile(out.string() + ".idx") == idx) << threads << " threads";
  }
  fs::remove_all(dir);
}

// Files named one by one keep the order given, and a rerun replaces the output.
TEST(PrepareData, NamedFilesKeepTheirOrder) {
  fs::path dir = strata::test::freshDir("order");
  strata::test::writeFile(dir / "b.txt", "second");
  strata::test::writeFile(dir / "a.txt", "first");
  PrepareOptions options;
  options.inputs = {(dir / "b.txt").string(), (dir / "a.txt").string()};
  options.output = (dir / "out").string();
  prepareData(options);
  prepareData(options);
  RawPrepared raw = readRaw(options.output);
  EXPECT_EQ(raw.starts, (std::vector<uint64_t>{0, 6, 11}));
  std::string text;
  for (int64_t id : raw.ids) text += static_cast<char>(id);
  EXPECT_EQ(text, "secondfirst");
  EXPECT_FALSE(fs::exists(options.output + ".bin.partial"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace strata::train

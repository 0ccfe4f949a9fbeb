// The trainer's reading of a prepared dataset: the split by documents, the
// windows each dp rank reads (a partition of every epoch's windows) and
// their tokens, all against references computed here from the documents the
// test wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "data/token_file_writer.h"
#include "prepared_files.h"
#include "strata/config/validate_config.h"
#include "strata/data/document_split.h"
#include "strata/data/prepare.h"
#include "strata/data/text_dataset.h"
#include "strata/error.h"
#include "strata/train/data_source.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

// Prepared with the byte tokenizer; returns the documents.
std::vector<std::string> preparedCorpus(const fs::path& dir, int files) {
  std::vector<std::string> documents = strata::test::writeCorpus(dir / "corpus", files);
  PrepareOptions options;
  options.inputs = {(dir / "corpus").string()};
  options.output = (dir / "data").string();
  prepareData(options);
  return documents;
}

// The byte ids of the documents d with keep(d), concatenated.
template <typename Keep>
std::vector<int64_t> tokensOf(const std::vector<std::string>& documents, Keep keep) {
  std::vector<int64_t> ids;
  for (size_t d = 0; d < documents.size(); ++d)
    if (keep(static_cast<int64_t>(d)))
      for (unsigned char byte : documents[d]) ids.push_back(byte);
  return ids;
}

std::vector<int64_t> readAll(const TokenSource& source) {
  std::vector<int64_t> ids(static_cast<size_t>(source.size()));
  source.read(0, source.size(), ids.data());
  return ids;
}

TEST(DocumentSplit, EveryFifthDocumentIsValidationAtOneFifth) {
  fs::path dir = strata::test::freshDir("split");
  std::vector<std::string> documents = preparedCorpus(dir, 30);  // 50 documents
  auto data = std::make_shared<const PreparedData>((dir / "data").string());
  DocumentSplit split = splitDocuments(data, 0.2);
  auto validation = [](int64_t d) { return d % 5 == 0; };
  EXPECT_EQ(split.validationDocuments, 10);
  EXPECT_EQ(split.trainDocuments, 40);
  EXPECT_EQ(readAll(*split.validation), tokensOf(documents, validation));
  EXPECT_EQ(readAll(*split.train), tokensOf(documents, [&](int64_t d) { return !validation(d); }));
  // A read across several runs, from the middle of one.
  std::vector<int64_t> all = readAll(*split.train), middle(500);
  split.train->read(37, 500, middle.data());
  EXPECT_TRUE(std::equal(middle.begin(), middle.end(), all.begin() + 37));
  for (int64_t d = 0; d < 1000; ++d) EXPECT_EQ(isValidationDocument(d, 0.2), validation(d)) << d;
  fs::remove_all(dir);
}

TEST(DocumentSplit, TooFewDocumentsNamesTheIndex) {
  fs::path dir = strata::test::freshDir("few");
  strata::test::writeFile(dir / "one.txt", "a single document of some length");
  PrepareOptions options;
  options.inputs = {(dir / "one.txt").string()};
  options.output = (dir / "data").string();
  prepareData(options);
  auto data = std::make_shared<const PreparedData>(options.output);
  try {
    splitDocuments(data, 0.1);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(options.output + ".idx: 1 documents split into 0 for "
                                                          "training and 1 for validation"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TrainConfig preparedConfig(const fs::path& dir) {
  TrainConfig config;
  config.data.prepared = (dir / "data").string();
  config.data.validationFraction = 0.2;
  config.train.seqLen = 16;
  config.train.globalBatch = 8;
  config.train.microBatch = 2;
  config.parallel.dp = 2;
  return config;
}

// Each epoch, the two ranks' windows are disjoint and together are the
// epoch's full global batches; each window's tokens are the reference's.
TEST(PreparedLoader, Dp2RanksPartitionEveryEpochsWindows) {
  fs::path dir = strata::test::freshDir("dp2");
  std::vector<std::string> documents = preparedCorpus(dir, 30);
  std::vector<int64_t> train = tokensOf(documents, [](int64_t d) { return d % 5 != 0; });
  TrainConfig config = preparedConfig(dir);
  const int64_t S = config.train.seqLen, G = config.train.globalBatch;
  const auto windows = static_cast<int64_t>(train.size() - 1) / S;
  DataSplit data = makeDataSplit(config);
  ASSERT_EQ(data.train.size(), windows);
  BatchReader rank0 = makeTrainReader(data, config, 0), rank1 = makeTrainReader(data, config, 1);
  ASSERT_EQ(rank0.batchesPerEpoch(), windows / G);
  std::vector<std::vector<int64_t>> epochOrders;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> seen;
    for (int64_t b = 0; b < rank0.batchesPerEpoch(); ++b) {
      for (BatchReader* reader : {&rank0, &rank1}) {
        ASSERT_EQ(reader->position(), (DataPosition{epoch, b}));
        std::vector<int64_t> indices = reader->peekIndices();
        Batch batch = reader->next();
        ASSERT_EQ(batch.input.size(0), G / 2);
        for (size_t row = 0; row < indices.size(); ++row) {
          int64_t w = indices[row];
          ASSERT_TRUE(w >= 0 && w < windows) << w;
          std::vector<int64_t> input(train.begin() + w * S, train.begin() + w * S + S);
          std::vector<int64_t> target(train.begin() + w * S + 1, train.begin() + w * S + S + 1);
          at::Tensor in = batch.input[int64_t(row)], out = batch.target[int64_t(row)];
          EXPECT_EQ(std::vector<int64_t>(in.data_ptr<int64_t>(), in.data_ptr<int64_t>() + S),
                    input);
          EXPECT_EQ(std::vector<int64_t>(out.data_ptr<int64_t>(), out.data_ptr<int64_t>() + S),
                    target);
          seen.push_back(w);
        }
      }
    }
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size())
        << "a window read twice in epoch " << epoch;
    EXPECT_EQ(static_cast<int64_t>(seen.size()), windows / G * G);
    epochOrders.push_back(seen);
  }
  EXPECT_NE(epochOrders[0], epochOrders[1]) << "each epoch has its own order";

  BatchReader validation = makeValidationReader(data, config, 1);
  std::vector<int64_t> held = tokensOf(documents, [](int64_t d) { return d % 5 == 0; });
  Batch first = validation.next();  // rank 1: windows 4..7 of global batch 0
  EXPECT_EQ(first.input[0][0].item<int64_t>(), held[4 * S]);
  fs::remove_all(dir);
}

TEST(PreparedLoader, ConfigErrors) {
  fs::path dir = strata::test::freshDir("config");
  preparedCorpus(dir, 6);
  TrainConfig config = preparedConfig(dir);
  config.data.files = {"a.txt"};
  try {
    validateConfig(config, 2);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.prepared and data.files exclude each other"),
              std::string::npos)
        << e.what();
  }
  config.data.files.clear();
  config.data.prepared = (dir / "missing").string();
  try {
    makeDataSplit(config);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "missing.idx").string() + ": cannot open"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// A dataset with a loss mask: document d of `lengths` counts its tokens
// from `prompt` on.
std::string maskedDataset(const fs::path& dir, const std::vector<int64_t>& lengths, int64_t prompt,
                          std::vector<int64_t>& ids, std::vector<uint8_t>& mask) {
  const std::string prefix = (dir / "sft").string();
  TokenFileWriter writer(prefix, 2, 256, /*lossMask=*/true);
  for (size_t d = 0; d < lengths.size(); ++d) {
    std::vector<int64_t> document;
    std::vector<uint8_t> counted;
    for (int64_t t = 0; t < lengths[d]; ++t) {
      document.push_back((static_cast<int64_t>(d) * 31 + t * 7) % 256);
      counted.push_back(t >= prompt ? 1 : 0);
    }
    writer.append(document);
    writer.appendLossMask(counted);
    ids.insert(ids.end(), document.begin(), document.end());
    mask.insert(mask.end(), counted.begin(), counted.end());
  }
  writer.finish();
  return prefix;
}

TEST(LossMask, TargetsOutsideTheMaskAreIgnoredAndInputsStay) {
  fs::path dir = strata::test::freshDir("mask");
  std::vector<int64_t> ids;
  std::vector<uint8_t> mask;
  const std::string prefix = maskedDataset(dir, {30, 40, 50}, 12, ids, mask);
  auto data = std::make_shared<const PreparedData>(prefix);
  ASSERT_TRUE(data->hasLossMask());
  const int64_t S = 8;
  WindowOptions masked;
  masked.maskTargets = true;
  WindowDataset windows(allDocuments(data), S, "all", masked);
  const Batch batch = windows.gather({0, 3, 7});
  for (int64_t row = 0; row < 3; ++row) {
    const int64_t first = std::vector<int64_t>{0, 3, 7}[static_cast<size_t>(row)] * S;
    for (int64_t j = 0; j < S; ++j) {
      const size_t at = static_cast<size_t>(first + j);
      EXPECT_EQ(batch.input[row][j].item<int64_t>(), ids[at]);
      EXPECT_EQ(batch.target[row][j].item<int64_t>(), mask[at + 1] ? ids[at + 1] : kIgnoredTarget)
          << "row " << row << " position " << j;
    }
  }
  // Unmasked windows of the same data: every target is the next token.
  const Batch plain = WindowDataset(allDocuments(data), S, "all").gather({3});
  EXPECT_TRUE(plain.target.ge(0).all().item<bool>());
  fs::remove_all(dir);
}

TEST(LossMask, LossOnDecidesAndNamesAMissingMask) {
  fs::path dir = strata::test::freshDir("losson");
  std::vector<int64_t> ids;
  std::vector<uint8_t> mask;
  TrainConfig config;
  config.data.tokenizer = "byte";
  config.data.prepared = maskedDataset(dir, std::vector<int64_t>(40, 30), 10, ids, mask);
  config.data.validationFraction = 0.25;
  config.train.seqLen = 8;
  config.train.globalBatch = 4;
  config.train.microBatch = 2;
  EXPECT_TRUE(makeDataSplit(config).lossMasked);  // auto, with a mask
  config.data.lossOn = "all";
  EXPECT_FALSE(makeDataSplit(config).lossMasked);
  config.data.lossOn = "assistant";
  EXPECT_TRUE(makeDataSplit(config).lossMasked);
  fs::remove(config.data.prepared + ".mask");
  try {
    makeDataSplit(config);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("has no loss mask (" + config.data.prepared + ".mask)"),
              std::string::npos)
        << e.what();
  }
  config.data.lossOn = "auto";
  EXPECT_FALSE(makeDataSplit(config).lossMasked);
  config.data.lossOn = "prompts";
  EXPECT_THROW(validateConfig(config, 1), ConfigError);
  config.data.lossOn = "assistant";
  config.data.prepared.clear();
  EXPECT_THROW(validateConfig(config, 1), ConfigError);
  fs::remove_all(dir);
}

TEST(LossMask, ACorruptMaskIsNamed) {
  fs::path dir = strata::test::freshDir("badmask");
  std::vector<int64_t> ids;
  std::vector<uint8_t> mask;
  const std::string prefix = maskedDataset(dir, {30, 30}, 10, ids, mask);
  {
    std::fstream file(prefix + ".mask", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(kLossMaskHeaderBytes + 5);
    file.put(2);
  }
  auto data = std::make_shared<const PreparedData>(prefix);
  std::vector<uint8_t> out(10);
  try {
    data->readLossMask(0, 10, out.data());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), prefix + ".mask at byte offset " +
                                         std::to_string(kLossMaskHeaderBytes + 5) +
                                         ": 2 is not 0 or 1 (a corrupt loss mask)");
  }
  fs::resize_file(prefix + ".mask", kLossMaskHeaderBytes + 59);
  try {
    PreparedData reopened(prefix);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("bytes, expected " + std::to_string(kLossMaskHeaderBytes + 60)),
        std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// The document of each token of `lengths`' documents laid end to end, with
// those `keep` leaves out skipped (the validation part's, when training).
std::vector<int64_t> documentOfEachToken(const std::vector<int64_t>& lengths,
                                         const std::function<bool(size_t)>& keep) {
  std::vector<int64_t> owner;
  for (size_t d = 0; d < lengths.size(); ++d)
    if (keep(d)) owner.insert(owner.end(), static_cast<size_t>(lengths[d]), int64_t(d));
  return owner;
}

// Window w's segments and targets, from where each token's document is.
void expectPackedWindows(const WindowDataset& windows, const std::vector<int64_t>& owner,
                         const std::vector<int64_t>& ids, const std::vector<int64_t>& rows) {
  const int64_t S = windows.sequenceLength();
  const Batch batch = windows.gather(rows);
  ASSERT_TRUE(batch.segments.defined());
  for (size_t row = 0; row < rows.size(); ++row) {
    const int64_t first = rows[row] * S;
    int64_t segment = 0;
    for (int64_t j = 0; j < S; ++j) {
      const size_t at = static_cast<size_t>(first + j);
      if (j > 0 && owner[at] != owner[at - 1]) ++segment;
      const bool crosses = owner[at + 1] != owner[at];
      const auto r = static_cast<int64_t>(row);
      EXPECT_EQ(batch.segments[r][j].item<int64_t>(), segment)
          << "window " << rows[row] << " " << j;
      EXPECT_EQ(batch.target[r][j].item<int64_t>(), crosses ? kIgnoredTarget : ids[at + 1])
          << "window " << rows[row] << " position " << j;
      EXPECT_EQ(batch.input[r][j].item<int64_t>(), ids[at]);
    }
  }
}

TEST(Packing, SegmentsAndTargetsFollowTheDocuments) {
  fs::path dir = strata::test::freshDir("pack");
  std::vector<int64_t> ids;
  std::vector<uint8_t> mask;
  const std::vector<int64_t> lengths = {5, 1, 9, 3, 12, 2, 2, 7, 4, 11, 6, 1, 8, 5};
  const std::string prefix = maskedDataset(dir, lengths, 0, ids, mask);
  auto data = std::make_shared<const PreparedData>(prefix);
  WindowOptions packed;
  packed.packDocuments = true;
  packed.splitAcrossWindows = true;
  // Every document: a window may start, end or hold several of them.
  WindowDataset all(allDocuments(data), 8, "all", packed);
  expectPackedWindows(all, documentOfEachToken(lengths, [](size_t) { return true; }), ids,
                      {0, 1, 2, 5, 8});
  // The training part at 1/5: documents 4, 9 and 14 left out, so the ones
  // either side meet in the token stream and are still apart.
  DocumentSplit split = splitDocuments(data, 0.2);
  auto trained = [](size_t d) { return !isValidationDocument(int64_t(d), 0.2); };
  std::vector<int64_t> trainIds;
  for (size_t d = 0, at = 0; d < lengths.size(); at += static_cast<size_t>(lengths[d]), ++d)
    if (trained(d))
      trainIds.insert(trainIds.end(), ids.begin() + at, ids.begin() + at + lengths[d]);
  WindowDataset train(split.train, 6, "training", packed);
  expectPackedWindows(train, documentOfEachToken(lengths, trained), trainIds, {0, 1, 2, 3, 7});
  fs::remove_all(dir);
}

// Token t of document d is d * 100 + t + 1: never 0, the padding.
int64_t documentToken(size_t d, int64_t t) { return static_cast<int64_t>(d) * 100 + t + 1; }

TEST(Packing, WholeDocumentsPerWindow) {
  fs::path dir = strata::test::freshDir("whole");
  const std::vector<int64_t> lengths = {5, 1, 9, 3, 12, 2, 2, 7, 4, 11, 6, 1, 8, 5};
  const std::string prefix = (dir / "docs").string();
  TokenFileWriter writer(prefix, 2, 2000, /*lossMask=*/false);
  for (size_t d = 0; d < lengths.size(); ++d) {
    std::vector<int64_t> document;
    for (int64_t t = 0; t < lengths[d]; ++t) document.push_back(documentToken(d, t));
    writer.append(document);
  }
  writer.finish();
  WindowOptions packed;
  packed.packDocuments = true;
  const int64_t S = 8;  // windows of 9 tokens: documents 4 and 9 do not fit in one
  WindowDataset windows(allDocuments(std::make_shared<const PreparedData>(prefix)), S, "all",
                        packed);
  // Worked by hand: tokens [0,6) [6,15) [15,18) [18,27) [26,34) [34,41)
  // [41,45) [45,54) [53,62) [63,71) [71,76) (document 11, token 62, has
  // nothing to train alone); 22 target positions padded.
  ASSERT_EQ(windows.size(), 11);
  EXPECT_EQ(windows.packing().documents, 14);
  EXPECT_EQ(windows.packing().cutDocuments, 2);
  EXPECT_DOUBLE_EQ(windows.packing().paddedFraction, 22.0 / (11 * 8));

  std::vector<int64_t> all(11);
  std::iota(all.begin(), all.end(), 0);
  const Batch batch = windows.gather(all);
  std::map<std::pair<size_t, int64_t>, std::vector<int64_t>> rowsOfTarget;
  size_t lastDocument = 0;
  for (int64_t row = 0; row < 11; ++row) {
    bool padding = false;
    for (int64_t j = 0; j < S; ++j) {
      const int64_t input = batch.input[row][j].item<int64_t>();
      const int64_t target = batch.target[row][j].item<int64_t>();
      const int64_t segment = batch.segments[row][j].item<int64_t>();
      const bool newSegment = j == 0 || segment != batch.segments[row][j - 1].item<int64_t>();
      if (input == 0) {  // padding runs to the window's end, a document of its own
        EXPECT_TRUE(padding || newSegment) << "row " << row << " position " << j;
        padding = true;
        EXPECT_EQ(target, kIgnoredTarget) << "row " << row << " position " << j;
        continue;
      }
      ASSERT_FALSE(padding) << "a token after padding: row " << row << " position " << j;
      const auto d = static_cast<size_t>((input - 1) / 100);
      const int64_t t = (input - 1) % 100;
      EXPECT_GE(d, lastDocument) << "documents out of order in row " << row;
      lastDocument = d;
      // A document that fits a window starts one of its segments.
      if (lengths[d] <= S + 1) {
        EXPECT_EQ(newSegment, t == 0) << "row " << row << " " << j;
      }
      if (!newSegment) {
        EXPECT_EQ(batch.input[row][j - 1].item<int64_t>(), input - 1);
      }
      if (t + 1 < lengths[d]) {
        EXPECT_EQ(target, documentToken(d, t + 1)) << "row " << row << " position " << j;
        rowsOfTarget[{d, t + 1}].push_back(row);
      } else {
        EXPECT_EQ(target, kIgnoredTarget) << "row " << row << " position " << j;
      }
    }
  }
  // Every target of every document trained exactly once; those of a
  // document that fits a window all in one.
  for (size_t d = 0; d < lengths.size(); ++d) {
    std::set<int64_t> rows;
    for (int64_t t = 1; t < lengths[d]; ++t) {
      auto found = rowsOfTarget.find({d, t});
      ASSERT_NE(found, rowsOfTarget.end()) << "document " << d << " token " << t << " untrained";
      EXPECT_EQ(found->second.size(), 1u) << "document " << d << " token " << t;
      rows.insert(found->second.front());
    }
    if (lengths[d] <= S + 1 && lengths[d] > 1) {
      EXPECT_EQ(rows.size(), 1u) << "document " << d;
    }
  }
  fs::remove_all(dir);
}

TEST(Packing, WholeDocumentsFitAShortSource) {
  // 5 documents, 17 tokens: too few for one unpacked window of 32, one
  // padded whole-document window.
  fs::path dir = strata::test::freshDir("short");
  std::vector<int64_t> ids;
  std::vector<uint8_t> mask;
  const std::string prefix = maskedDataset(dir, {3, 4, 2, 5, 3}, 1, ids, mask);
  WindowOptions packed;
  packed.packDocuments = true;
  packed.maskTargets = true;
  WindowDataset windows(allDocuments(std::make_shared<const PreparedData>(prefix)), 32, "all",
                        packed);
  ASSERT_EQ(windows.size(), 1);
  const Batch batch = windows.gather({0});
  // Each document's tokens after its first are targets inside the mask
  // (prompt 1): 17 - 5 count, none across a document's end or in the padding.
  EXPECT_EQ(batch.target.ge(0).sum().item<int64_t>(), 12);
  EXPECT_EQ(batch.input.narrow(1, 17, 15).ne(0).sum().item<int64_t>(), 0);
  fs::remove_all(dir);
}

TEST(Packing, NeedsDocumentsAndNamesTheSetting) {
  WindowOptions packed;
  packed.packDocuments = true;
  try {
    WindowDataset(tensorTokens(torch::arange(40, torch::kLong)), 8, "training", packed);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("training data has no document boundaries"),
              std::string::npos)
        << e.what();
  }
  TrainConfig config;
  config.data.pack = true;
  try {
    validateConfig(config, 1);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.pack needs data.prepared"), std::string::npos)
        << e.what();
  }
  config = TrainConfig{};
  config.data.splitAcrossWindows = true;
  try {
    validateConfig(config, 1);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.split_across_windows"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::train

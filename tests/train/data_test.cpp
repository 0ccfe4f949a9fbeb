#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "strata/config/config_file.h"
#include "strata/data/batch_reader.h"
#include "strata/data/corpus.h"
#include "strata/data/text_dataset.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"
#include "strata/train/data_source.h"
#include "strata/util/toml.h"
#include "test_util.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

std::string writeFile(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

fs::path freshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("strata_train_" + name + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(Tokenizer, RoundTripsUtf8Bytes) {
  std::string text = "naïve café, 17 + 25 = 42.\n";
  std::vector<int64_t> ids = encodeBytes(text);
  EXPECT_EQ(ids.size(), text.size());  // one token per byte, multi-byte chars too
  EXPECT_EQ(ids[2], 0xC3);
  EXPECT_EQ(decodeBytes(ids), text);
}

TEST(Tokenizer, RejectsIdsOutsideTheByteRange) {
  EXPECT_THROW(
      {
        try {
          decodeBytes({65, 300});
        } catch (const ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("300"), std::string::npos);
          throw;
        }
      },
      ConfigError);
}

TEST(Corpus, IsDeterministicAndExactlySized) {
  EXPECT_EQ(generateCorpus(3, 5000), generateCorpus(3, 5000));
  EXPECT_NE(generateCorpus(3, 5000), generateCorpus(4, 5000));
  EXPECT_EQ(generateCorpus(3, 12345).size(), 12345u);
  EXPECT_EQ(generateCorpus(3, 0), "");
  EXPECT_THROW(generateCorpus(3, -1), ConfigError);
}

TEST(Corpus, ArithmeticFactsAreTrue) {
  std::string text = generateCorpus(11, 200000);
  std::regex fact(R"((\d+) ([+-]) (\d+) = (\d+)\.)");
  int checked = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), fact), end; it != end; ++it, ++checked) {
    int a = std::stoi((*it)[1]), b = std::stoi((*it)[3]), c = std::stoi((*it)[4]);
    EXPECT_EQ((*it)[2] == "+" ? a + b : a - b, c) << it->str();
  }
  EXPECT_GT(checked, 1000);
}

TEST(Corpus, SubjectsAgreeWithTheirVerbs) {
  std::string text = generateCorpus(5, 100000);
  // "the ADJ NOUN VERBs" (singular) or "the ADJ NOUNs VERB" (plural), never both or neither.
  std::regex clause(R"(the [a-z]+ ([a-z]+) ([a-z]+) (near|behind|inside|under|beside|past) )");
  int checked = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), clause), end; it != end; ++it) {
    bool pluralNoun = (*it)[1].str().back() == 's';
    bool singularVerb = (*it)[2].str().back() == 's';
    EXPECT_NE(pluralNoun, singularVerb) << it->str();
    ++checked;
  }
  EXPECT_GT(checked, 500);
}

// Entropies in bits per byte, from counts.
double unigramEntropy(const std::string& text) {
  std::vector<double> counts(256);
  for (unsigned char c : text) counts[c] += 1;
  double h = 0;
  for (double n : counts)
    if (n > 0) h -= n / text.size() * std::log2(n / text.size());
  return h;
}

double bigramConditionalEntropy(const std::string& text) {
  std::vector<double> pair(256 * 256), first(256);
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    auto a = static_cast<unsigned char>(text[i]), b = static_cast<unsigned char>(text[i + 1]);
    pair[a * 256 + b] += 1;
    first[a] += 1;
  }
  double h = 0, total = static_cast<double>(text.size() - 1);
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b)
      if (double n = pair[a * 256 + b]; n > 0) h -= n / total * std::log2(n / first[a]);
  return h;
}

TEST(Corpus, HasStructureBelowTheUnigramEntropy) {
  std::string text = generateCorpus(7, 300000);
  double unigram = unigramEntropy(text);
  double bigram = bigramConditionalEntropy(text);
  EXPECT_GT(unigram, 3.5);
  // Even one byte of context removes over a third of the uncertainty; longer
  // contexts (words, facts, sums) remove far more.
  EXPECT_LT(bigram, unigram - 1.5) << "unigram " << unigram << " bigram " << bigram;
}

TEST(TextFiles, ConcatenatesWithNewlinesBetweenFiles) {
  fs::path dir = freshDir("files");
  std::string a = writeFile(dir / "a.txt", "first");
  std::string b = writeFile(dir / "b.txt", "zweite Zeile ü\n");
  std::string c = writeFile(dir / "c.txt", "third");
  EXPECT_EQ(readTextFiles({a, b, c}), "first\nzweite Zeile ü\nthird");
  fs::remove_all(dir);
}

TEST(TextFiles, NamesTheBadFile) {
  fs::path dir = freshDir("badfiles");
  std::string good = writeFile(dir / "good.txt", "ok");
  std::string latin1 = writeFile(dir / "latin1.txt", "caf\xE9 ok");
  std::string empty = writeFile(dir / "empty.txt", "");
  std::string missing = (dir / "missing.txt").string();
  expectErrorNaming([&] { readTextFiles({good, missing}); }, {missing});
  expectErrorNaming([&] { readTextFiles({good, latin1}); }, {latin1, "UTF-8", "offset 3"});
  expectErrorNaming([&] { readTextFiles({empty}); }, {empty, "empty"});
  expectErrorNaming([&] { readTextFiles({}); }, {"no data files"});
  fs::remove_all(dir);
}

TEST(TextFiles, FindsInvalidUtf8) {
  EXPECT_EQ(firstInvalidUtf8("plain ascii"), -1);
  EXPECT_EQ(firstInvalidUtf8("\xE2\x82\xAC euro, \xF0\x9F\x98\x80 emoji"), -1);
  EXPECT_EQ(firstInvalidUtf8("ab\x80"), 2);            // stray continuation byte
  EXPECT_EQ(firstInvalidUtf8("ab\xC0\xAF"), 2);        // overlong '/'
  EXPECT_EQ(firstInvalidUtf8("\xED\xA0\x80"), 0);      // surrogate
  EXPECT_EQ(firstInvalidUtf8("x\xE2\x82"), 1);         // cut short
  EXPECT_EQ(firstInvalidUtf8("\xF4\x90\x80\x80"), 0);  // above U+10FFFF
}

TEST(TokenSplit, HoldsOutAContiguousTail) {
  torch::Tensor tokens = torch::arange(100, torch::kLong);
  TokenSplit split = splitTokens(tokens, 0.1);
  EXPECT_TRUE(torch::equal(split.train, torch::arange(90, torch::kLong)));
  EXPECT_TRUE(torch::equal(split.validation, torch::arange(90, 100, torch::kLong)));
  expectErrorNaming([&] { splitTokens(tokens, 0.0); }, {"validation fraction", "0.0"});
  expectErrorNaming([&] { splitTokens(tokens, 1.0); }, {"validation fraction", "1.0"});
}

TEST(WindowDataset, TargetsAreInputsShiftedByOne) {
  WindowDataset data(torch::arange(21, torch::kLong), 4, "train");
  EXPECT_EQ(data.size(), 5);  // (21 - 1) / 4
  Batch batch = data.gather({2, 0});
  EXPECT_TRUE(torch::equal(batch.input[0], torch::arange(8, 12, torch::kLong)));
  EXPECT_TRUE(torch::equal(batch.target[0], torch::arange(9, 13, torch::kLong)));
  EXPECT_TRUE(torch::equal(batch.input[1], torch::arange(0, 4, torch::kLong)));
  expectErrorNaming([&] { data.gather({5}); }, {"window 5", "[0, 5)"});
  expectErrorNaming([&] { WindowDataset(torch::arange(4, torch::kLong), 4, "validation"); },
                    {"validation", "4 tokens", "sequence length 4"});
}

WindowDataset numbered(int64_t windows, int64_t length = 3) {
  return WindowDataset(torch::arange(windows * length + 1, torch::kLong), length, "train");
}

ReaderOptions options(int64_t globalBatch, int replicas = 1, int replica = 0, uint64_t seed = 9) {
  ReaderOptions o;
  o.globalBatch = globalBatch;
  o.replicas = replicas;
  o.replica = replica;
  o.seed = seed;
  return o;
}

TEST(BatchReader, IsDeterministicGivenTheSeed) {
  BatchReader a(numbered(40), options(8, 1, 0, 1)), b(numbered(40), options(8, 1, 0, 1));
  BatchReader other(numbered(40), options(8, 1, 0, 2));
  bool anyDifferent = false;
  for (int step = 0; step < 7; ++step) {
    std::vector<int64_t> indices = a.peekIndices();
    EXPECT_EQ(indices, b.peekIndices());
    anyDifferent |= indices != other.peekIndices();
    EXPECT_TRUE(torch::equal(a.next().input, b.next().input));
    other.next();
  }
  EXPECT_TRUE(anyDifferent);
}

TEST(BatchReader, EpochVisitsEachWindowAtMostOnce) {
  BatchReader reader(numbered(43), options(8));
  EXPECT_EQ(reader.batchesPerEpoch(), 5);  // 43 windows, 3 left out
  std::set<int64_t> seen;
  for (int step = 0; step < 5; ++step) {
    for (int64_t index : reader.peekIndices())
      EXPECT_TRUE(seen.insert(index).second) << "window " << index << " read twice";
    reader.next();
  }
  EXPECT_EQ(seen.size(), 40u);
  EXPECT_EQ(reader.position(), (DataPosition{1, 0}));
}

TEST(BatchReader, ReplicasSplitEachGlobalBatchIntoContiguousSlices) {
  for (int replicas : {2, 4}) {
    BatchReader single(numbered(50), options(8));
    std::vector<BatchReader> shards;
    for (int r = 0; r < replicas; ++r) shards.emplace_back(numbered(50), options(8, replicas, r));
    for (int step = 0; step < 9; ++step) {  // crosses an epoch boundary (6 batches per epoch)
      std::vector<torch::Tensor> parts;
      for (BatchReader& shard : shards) {
        Batch part = shard.next();
        EXPECT_EQ(part.input.size(0), 8 / replicas);
        parts.push_back(part.input);
      }
      EXPECT_TRUE(torch::equal(torch::cat(parts), single.next().input))
          << "step " << step << " with " << replicas << " replicas";
    }
  }
}

TEST(BatchReader, PositionRestoresExactly) {
  BatchReader original(numbered(30), options(4, 2, 1));
  for (int step = 0; step < 9; ++step) original.next();  // 7 batches per epoch: now in epoch 1
  DataPosition saved = original.position();
  EXPECT_EQ(saved, (DataPosition{1, 2}));
  BatchReader resumed(numbered(30), options(4, 2, 1));
  resumed.seek(saved);
  for (int step = 0; step < 10; ++step)
    EXPECT_TRUE(torch::equal(original.next().target, resumed.next().target)) << step;
  expectErrorNaming([&] { resumed.seek({0, 7}); }, {"batch 7", "7 batches per epoch"});
}

TEST(BatchReader, RejectsBadSharding) {
  expectErrorNaming([] { BatchReader(numbered(30), options(6, 4, 0)); },
                    {"global batch 6", "4 data-parallel replicas"});
  expectErrorNaming([] { BatchReader(numbered(30), options(8, 2, 2)); }, {"replica 2", "[0, 2)"});
  expectErrorNaming([] { BatchReader(numbered(5), options(8)); },
                    {"5 windows", "global batch of 8"});
}

TEST(BatchReader, UnshuffledReadsInOrder) {
  ReaderOptions o = options(4);
  o.shuffle = false;
  BatchReader reader(numbered(10), o);
  EXPECT_EQ(reader.peekIndices(), (std::vector<int64_t>{0, 1, 2, 3}));
  reader.next();
  EXPECT_EQ(reader.peekIndices(), (std::vector<int64_t>{4, 5, 6, 7}));
}

TrainConfig smallDataConfig() {
  TrainConfig config;
  config.data.corpusBytes = 20000;
  config.data.validationFraction = 0.1;
  config.train.seqLen = 32;
  config.train.globalBatch = 8;
  config.parallel.dp = 2;
  return config;
}

TEST(DataSource, SplitsTheGeneratedCorpusByDefault) {
  TrainConfig config = smallDataConfig();
  DataSplit data = makeDataSplit(config);
  EXPECT_EQ(data.train.size(), (18000 - 1) / 32);
  EXPECT_EQ(data.validation.size(), (2000 - 1) / 32);
  Batch first = data.train.gather({0});
  std::string corpus = generateCorpus(7, 20000);
  EXPECT_EQ(decodeBytes(std::vector<int64_t>(first.input.data_ptr<int64_t>(),
                                             first.input.data_ptr<int64_t>() + 32)),
            corpus.substr(0, 32));
}

std::string windowText(const WindowDataset& windows, int64_t index) {
  at::Tensor input = windows.gather({index}).input;  // [1, seq_len]
  return decodeBytes(
      std::vector<int64_t>(input.data_ptr<int64_t>(), input.data_ptr<int64_t>() + input.numel()));
}

TEST(DataSource, ReadsEveryFileTheConfigFileNames) {
  fs::path dir = freshDir("configfiles");
  std::string a = writeFile(dir / "a.txt", std::string(4000, 'a'));
  std::string b = writeFile(dir / "b \"2\".txt", std::string(1000, 'b'));
  std::string config = writeFile(
      dir / "run.toml", "[data]\nfiles = [" + util::tomlLiteral(a) + ", " + util::tomlLiteral(b) +
                            "]\nvalidation_fraction = 0.2\n[train]\nseq_len = 32\n");
  DataSplit data = makeDataSplit(readConfigFile(config));
  // 4000 + 1 (the newline between files) + 1000 tokens: the last 1001 are
  // validation, so training holds exactly the first file.
  EXPECT_EQ(data.train.size(), (4000 - 1) / 32);
  EXPECT_EQ(data.validation.size(), (1001 - 1) / 32);
  EXPECT_EQ(windowText(data.train, data.train.size() - 1), std::string(32, 'a'));
  EXPECT_EQ(windowText(data.validation, 0), "\n" + std::string(31, 'b'));
  EXPECT_EQ(windowText(data.validation, data.validation.size() - 1), std::string(32, 'b'));
  fs::remove_all(dir);
}

TEST(DataSource, ReadersShardTrainingAndKeepValidationInOrder) {
  TrainConfig config = smallDataConfig();
  DataSplit data = makeDataSplit(config);
  BatchReader train0 = makeTrainReader(data, config, 0);
  BatchReader train1 = makeTrainReader(data, config, 1);
  EXPECT_EQ(train0.localBatch(), 4);
  std::vector<int64_t> a = train0.peekIndices(), b = train1.peekIndices();
  for (int64_t index : a) EXPECT_EQ(std::count(b.begin(), b.end(), index), 0);
  BatchReader validation1 = makeValidationReader(data, config, 1);
  EXPECT_EQ(validation1.peekIndices(), (std::vector<int64_t>{4, 5, 6, 7}));
  config.train.seed += 1;  // another seed, another order
  EXPECT_NE(makeTrainReader(data, config, 0).peekIndices(), a);
}

TEST(DataSource, NamesMissingFilesAndTooLittleText) {
  TrainConfig config = smallDataConfig();
  config.data.files = {"/nonexistent/corpus.txt"};
  expectErrorNaming([&] { makeDataSplit(config); }, {"/nonexistent/corpus.txt"});
  config = smallDataConfig();
  config.data.corpusBytes = 400;
  config.train.globalBatch = 16;
  DataSplit tiny = makeDataSplit(config);  // 11 training windows of 32 tokens
  expectErrorNaming([&] { makeTrainReader(tiny, config, 0); },
                    {"training data has 11 windows", "global batch of 16", "more text"});
  config.train.globalBatch = 4;  // fills training, not validation's 1 window
  expectErrorNaming([&] { makeValidationReader(tiny, config, 0); },
                    {"validation data has 1 windows", "data.validation_fraction (now 0.1)"});
  config.data.corpusBytes = 300;  // 30 validation tokens
  expectErrorNaming([&] { makeDataSplit(config); },
                    {"validation data has 30 tokens", "sequence length 32"});
}

}  // namespace
}  // namespace strata::train

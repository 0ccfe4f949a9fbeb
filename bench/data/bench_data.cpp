// bench_data: the data path's two benchmarks, in one run.
//
//   data_prepare  prepareData() on a generated corpus of kCorpusFiles files
//                 (kCorpusBytes in all) with GPT-2's BPE (the byte tokenizer
//                 when GPT-2's files are not in the build tree), one thread
//                 per core: input MB/s, best of kPrepareRounds.
//   data_loader   the trainer's reader of that prepared data (memory map,
//                 document split, shuffled windows; BatchReader::next() into
//                 [B, S] tensors) at the demo's batch and sequence length,
//                 against the trainer's own tokens/s on the demo model
//                 (configs/demo.toml's model in one process, pp = dp = tp =
//                 1, every core), measured in the same run. The loader must
//                 be at least 20x the trainer: ratio = loader / trainer.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_env.h"
#include "strata/config/config_file.h"
#include "strata/data/corpus.h"
#include "strata/data/prepare.h"
#include "strata/runtime/world.h"
#include "strata/train/data_source.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"

namespace {

namespace fs = std::filesystem;
using strata::jsonNumber;
using Clock = std::chrono::steady_clock;

constexpr int kCorpusFiles = 32;
constexpr int64_t kCorpusBytes = 16 << 20;
constexpr int kPrepareRounds = 2;
constexpr double kLoaderSeconds = 2;
constexpr int kTrainSteps = 8;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string tokenizerSpec() {
  return fs::exists(fs::path(STRATA_GPT2_BUILD_DIR) / "encoder.json") ? STRATA_GPT2_BUILD_DIR
                                                                      : "byte";
}

fs::path writeCorpus(const fs::path& dir) {
  fs::create_directories(dir / "corpus");
  std::string text = strata::train::generateCorpus(11, kCorpusBytes);
  int64_t part = kCorpusBytes / kCorpusFiles;
  for (int f = 0; f < kCorpusFiles; ++f)
    std::ofstream(dir / "corpus" / (std::to_string(100 + f) + ".txt"), std::ios::binary)
        << text.substr(static_cast<size_t>(f * part), static_cast<size_t>(part));
  return dir / "corpus";
}

nlohmann::ordered_json benchPrepare(const fs::path& dir, const std::string& tokenizer) {
  strata::train::PrepareOptions options;
  options.tokenizer = tokenizer;
  options.inputs = {writeCorpus(dir).string()};
  options.output = (dir / "data").string();
  options.threads = static_cast<int>(std::thread::hardware_concurrency());
  double best = 0;
  strata::train::PrepareSummary summary;
  for (int round = 0; round < kPrepareRounds; ++round) {
    summary = strata::train::prepareData(options);
    best = std::max(best, static_cast<double>(summary.bytes) / 1e6 / summary.seconds);
  }
  nlohmann::ordered_json result;
  result["bench"] = "data_prepare";
  result["mb_per_s"] = jsonNumber(best);
  result["tokenizer"] = tokenizer == "byte" ? "byte" : "gpt2";
  result["threads"] = options.threads;
  result["mb"] = jsonNumber(static_cast<double>(summary.bytes) / 1e6);
  result["tokens"] = summary.tokens;
  return result;
}

strata::train::TrainConfig demoConfig() {
  strata::train::TrainConfig config =
      strata::train::readConfigFile(strata::bench::sourceDir() + "/configs/demo.toml");
  config.parallel.pp = config.parallel.dp = config.parallel.tp = 1;
  config.train.microBatch = config.train.globalBatch;
  config.train.threads = static_cast<int64_t>(std::thread::hardware_concurrency());
  return config;
}

// The loader alone: tokens per second out of BatchReader::next().
double loaderTokensPerSecond(strata::train::TrainConfig config, const fs::path& prepared,
                             const std::string& tokenizer) {
  config.data.prepared = prepared.string();
  config.data.tokenizer = tokenizer;
  config.model.vocab = 50304;
  strata::train::DataSplit data = strata::train::makeDataSplit(config);
  strata::train::BatchReader reader = strata::train::makeTrainReader(data, config, 0);
  int64_t tokens = 0;
  auto start = Clock::now();
  while (secondsSince(start) < kLoaderSeconds) {
    strata::train::Batch batch = reader.next();
    tokens += batch.input.numel();
  }
  return static_cast<double>(tokens) / secondsSince(start);
}

double trainerTokensPerSecond(const strata::train::TrainConfig& config) {
  strata::ProcessEnv env;
  env.masterAddr = "127.0.0.1";
  env.masterPort = strata::bench::freeLoopbackPort();
  strata::train::Trainer trainer(config, strata::World::init(env, strata::Timeouts{}));
  trainer.step();  // warm-up: allocator, kernels
  trainer.step();
  auto start = Clock::now();
  for (int i = 0; i < kTrainSteps; ++i) trainer.step();
  double seconds = secondsSince(start);
  return static_cast<double>(kTrainSteps * config.train.globalBatch * config.train.seqLen) /
         seconds;
}

}  // namespace

int main() {
  fs::path dir = fs::temp_directory_path() / ("strata_bench_data_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string tokenizer = tokenizerSpec();
  std::cerr << "bench_data: preparing " << kCorpusBytes / 1000000 << " MB with " << tokenizer
            << "\n";
  nlohmann::ordered_json prepare = benchPrepare(dir, tokenizer);
  strata::train::TrainConfig config = demoConfig();
  double loader = loaderTokensPerSecond(config, dir / "data", tokenizer);
  std::cerr << "bench_data: training the demo model for " << kTrainSteps << " steps\n";
  double train = trainerTokensPerSecond(config);
  fs::remove_all(dir);

  nlohmann::ordered_json loaderResult;
  loaderResult["bench"] = "data_loader";
  loaderResult["tokens_per_s"] = jsonNumber(loader);
  loaderResult["train_tokens_per_s"] = jsonNumber(train);
  loaderResult["ratio"] = jsonNumber(loader / train);
  loaderResult["target"] = 20;
  loaderResult["batch"] = config.train.globalBatch;
  loaderResult["seq_len"] = config.train.seqLen;
  std::cout << strata::dumpJson(prepare) << "\n" << strata::dumpJson(loaderResult) << std::endl;
  return loader >= 20 * train ? 0 : 1;
}

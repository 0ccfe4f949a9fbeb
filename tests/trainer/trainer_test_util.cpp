#include "trainer_test_util.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>

#include "strata/checkpoint/export_hugging_face.h"
#include "strata/models/model_family.h"
#include "strata/runtime/timeouts.h"
#include "strata/tensor_parallel/sharding.h"

namespace strata::train::testing {

namespace fs = std::filesystem;

TrainConfig tinyConfig() {
  TrainConfig c;
  c.model.layers = 4;
  c.model.hidden = 32;
  c.model.heads = 4;
  c.model.ffn = 64;
  c.model.vocab = 256;
  c.model.context = 16;
  c.model.dropout = 0.0;
  c.model.tiedEmbeddings = true;
  c.train.steps = 20;
  c.train.globalBatch = 8;
  c.train.microBatch = 2;
  c.train.seqLen = 16;
  c.train.warmupSteps = 2;  // the rate changes every step, so a wrong LR state shows
  c.train.evalBatches = 1;
  c.data.corpusBytes = 20000;
  return c;
}

TrainConfig tinyLlamaConfig(int64_t kvHeads) {
  TrainConfig c = tinyConfig();
  c.model.architecture = kLlamaArchitecture;
  c.model.tiedEmbeddings = false;
  c.model.kvHeads = kvHeads;
  c.model.ropeTheta = 500000.0;
  return c;
}

TrainConfig tinyMoeConfig() {
  TrainConfig c = tinyLlamaConfig(2);
  c.model.moe.experts = 4;
  c.model.moe.topK = 2;
  c.model.moe.expertFfn = 32;
  c.model.moe.every = 2;
  c.model.moe.auxLossCoeff = 0.05;
  c.model.moe.zLossCoeff = 0.01;
  return c;
}

TrainConfig withLayout(TrainConfig c, int64_t pp, int64_t dp, int64_t cp, int64_t tp) {
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.cp = cp;
  c.parallel.tp = tp;
  return c;
}

std::string sharedDir(const std::string& name) {
  if (const char* inherited = std::getenv(kSharedDirVariable)) return inherited;
  fs::path dir =
      fs::temp_directory_path() / ("strata_trainer_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void removeSharedDir(const std::string& dir) {
  if (std::getenv(kSharedDirVariable) == nullptr) fs::remove_all(dir);
}

strata::testing::MultiProcessOptions sharedDirOptions(const std::string& dir) {
  strata::testing::MultiProcessOptions options;
  options.env[kSharedDirVariable] = dir;
  options.timeout = std::chrono::seconds(120);
  options.commTimeoutSeconds = 60;
  return options;
}

std::shared_ptr<World> singleProcessWorld() {
  // Held until the store listens on it.
  strata::testing::ReservedPort port;
  ProcessEnv env;
  env.masterPort = port.number();
  return World::init(env, Timeouts::fromSeconds(30));
}

torch::nn::Sequential oneProcessModel(const TrainConfig& config, const TensorMap& weights) {
  std::shared_ptr<World> world = singleProcessWorld();
  ParallelGroups groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  models::ModelSpec spec = modelSpecOf(config);
  torch::nn::Sequential model = models::modelFamily(spec.architecture).build(spec, groups.tp);
  {
    torch::NoGradGuard noGrad;
    for (auto& item : model->named_parameters()) item.value().copy_(weights.at(item.key()));
  }
  model->eval();
  return model;
}

std::vector<double> trainSteps(Trainer& trainer, int steps) {
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(trainer.step().loss);
  return losses;
}

namespace {

std::string valuesPath(const std::string& dir, const std::string& name, int rank) {
  return (fs::path(dir) / (name + "-rank-" + std::to_string(rank) + ".txt")).string();
}

}  // namespace

void writeValues(const std::string& dir, const std::string& name, int rank,
                 const std::vector<double>& values) {
  std::ofstream out(valuesPath(dir, name, rank));
  // 17 significant digits read back as the same double.
  out << std::setprecision(std::numeric_limits<double>::max_digits10);
  for (double v : values) out << v << "\n";
}

std::vector<double> readValues(const std::string& dir, const std::string& name, int rank) {
  std::ifstream in(valuesPath(dir, name, rank));
  std::vector<double> values;
  for (double v; in >> v;) values.push_back(v);
  return values;
}

void writeShards(const std::string& dir, int rank, const Trainer& trainer) {
  std::string base = (fs::path(dir) / ("shards-rank-" + std::to_string(rank))).string();
  std::vector<at::Tensor> tensors;
  std::ofstream names(base + ".txt");
  names << trainer.groups().coord.tp << " " << trainer.groups().tp->size() << "\n";
  for (const ParameterShard& shard : trainer.parameterShards()) {
    names << shard.name << " " << shard.shardDim << "\n";
    tensors.push_back(shard.tensor.detach());
  }
  torch::save(tensors, base + ".pt");
}

SavedShards readShards(const std::string& dir, int rank) {
  std::string base = (fs::path(dir) / ("shards-rank-" + std::to_string(rank))).string();
  SavedShards saved;
  std::ifstream names(base + ".txt");
  names >> saved.tpRank >> saved.tpSize;
  std::vector<at::Tensor> tensors;
  torch::load(tensors, base + ".pt");
  for (const at::Tensor& tensor : tensors) {
    ParameterShard shard;
    names >> shard.name >> shard.shardDim;
    shard.tensor = tensor;
    saved.shards.push_back(shard);
  }
  return saved;
}

void flipMiddleByte(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  auto middle = static_cast<std::streamoff>(fs::file_size(path) / 2);
  char byte = 0;
  file.seekg(middle);
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x01);
  file.seekp(middle);
  file.write(&byte, 1);
}

void truncateBy(const std::string& path, uintmax_t bytes) {
  fs::resize_file(path, fs::file_size(path) - bytes);
}

std::string trainAndExportTo(const std::string& dir, TrainConfig config, int64_t maxShardBytes) {
  config.checkpoint.dir = dir + "/ckpt";
  const ParallelConfig& p = config.parallel;
  strata::testing::runInProcesses(
      static_cast<int>(p.pp * p.dp * p.cp * p.tp),
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, 3);
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  std::string out = dir + "/hf/model.safetensors";
  // Ranks of a later job in the same test pass here too (multiprocess.h).
  if (!strata::testing::inRankProcess())
    exportCheckpoint({config.checkpoint.dir, "safetensors", out, maxShardBytes});
  return out;
}

TensorMap byName(const Trainer& trainer) {
  TensorMap tensors;
  for (const ParameterShard& shard : trainer.parameterShards())
    tensors[shard.name] = shard.tensor.detach().clone();
  return tensors;
}

TensorMap checkpointWeightsOf(const std::string& dir, TrainConfig oneProcess) {
  oneProcess.checkpoint.dir = dir + "/ckpt";
  Trainer serial(oneProcess, singleProcessWorld());
  EXPECT_TRUE(serial.resumeFromLatest().has_value());
  return byName(serial);
}

void expectShardsSliceWhole(const std::string& dir, int ranks, const TensorMap& whole,
                            int64_t paddedVocabulary) {
  for (int rank = 0; rank < ranks; ++rank) {
    SavedShards saved = readShards(dir, rank);
    for (const ParameterShard& shard : saved.shards) {
      torch::Tensor full = whole.at(shard.name);
      bool vocabulary =
          shard.name == "embedding.tokens.weight" || shard.name == "head.lm_head.weight";
      if (vocabulary && full.size(0) < paddedVocabulary)
        full = torch::cat({full, torch::zeros({paddedVocabulary - full.size(0), full.size(1)})});
      torch::Tensor expected = full;
      if (shard.shardDim != tensor_parallel::kReplicated) {
        int64_t part = full.size(shard.shardDim) / saved.tpSize;
        expected = full.narrow(shard.shardDim, part * saved.tpRank, part);
      }
      EXPECT_TRUE(torch::equal(shard.tensor, expected)) << "rank " << rank << " " << shard.name;
    }
  }
}

}  // namespace strata::train::testing

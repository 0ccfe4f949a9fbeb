#include "calibration_tasks.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bench_stats.h"
#include "machine_probes.h"
#include "silent_communicator.h"
#include "strata/models/gpt.h"
#include "strata/pipeline/profiler.h"
#include "strata/pipeline/split.h"
#include "strata/runtime/world.h"
#include "strata/train/trainer.h"
#include "strata/util/parse_number.h"
#include "sync_wait.h"

namespace strata::bench {
namespace {

constexpr int kWarmupSteps = 2;
constexpr int kTimedSteps = 5;
constexpr int kProfileRounds = 3;
constexpr int kMicroBatchRuns = 7;
constexpr int64_t kLargeMessageBytes = 4 << 20;
// Where shared memory's copies outgrow the caches (the large-message rate).
constexpr int64_t kHugeMessageBytes = 64 << 20;
constexpr int64_t kSmallMessageBytes = 1 << 10;

std::string requiredEnv(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) throw std::runtime_error(std::string("calibration: ") + name + " unset");
  return value;
}

// One micro-batch of training: forward, loss, backward.
void microBatchStep(torch::nn::Sequential& model, const at::Tensor& ids) {
  models::modelOutputLoss(model, model->forward(ids), ids).backward();
}

// The calibration GPT built over `groups` (its tp group), and one
// micro-batch of ids [b, s] drawn from a fixed seed.
struct CalibrationGpt {
  train::TrainConfig config;
  torch::nn::Sequential model;
  at::Tensor ids;
};

// One of tensor parallelism's all-reduces: activations [s, b, hidden] in fp32.
int64_t tensorParallelBytes(const train::TrainConfig& c) {
  return 4 * c.train.seqLen * c.train.microBatch * c.model.hidden;
}

CalibrationGpt calibrationGpt(const ParallelGroups& groups) {
  CalibrationGpt gpt{calibrationConfig(1, 1, 1, "1f1b"), nullptr, {}};
  const train::TrainConfig& c = gpt.config;
  gpt.model = models::buildGpt(models::gptConfigOf(train::trainingModelSpecOf(c)), groups.tp);
  torch::manual_seed(1);
  gpt.ids = torch::randint(c.model.vocab, {c.train.microBatch, c.train.seqLen}, torch::kLong);
  return gpt;
}

// A transformer block's forward of the calibration GPT, without autograd:
// the work between two of tensor parallelism's all-reduces.
std::function<void()> blockForwardOf(const CalibrationGpt& gpt) {
  const train::TrainConfig& c = gpt.config;
  torch::nn::AnyModule block = pipeline::layersOf(gpt.model).at(1);
  at::Tensor hidden = torch::randn({c.train.seqLen, c.train.microBatch, c.model.hidden});
  return [block, hidden]() mutable {
    torch::NoGradGuard noGrad;
    block.forward(hidden);
  };
}

// Forward and backward of the loss on the head's output (its normalized
// input, the loss taking the head's product as the trainer's model does):
// the trainer's last stage runs it, the layer profiler does not.
std::pair<double, double> lossSeconds(const torch::nn::Sequential& model, const at::Tensor& output,
                                      const at::Tensor& targets) {
  std::vector<double> forward, backward;
  for (int run = 0; run < 12; ++run) {
    at::Tensor x = output.detach().requires_grad_(true);
    auto start = std::chrono::steady_clock::now();
    at::Tensor loss = models::modelOutputLoss(model, x, targets);
    auto middle = std::chrono::steady_clock::now();
    loss.backward();
    auto end = std::chrono::steady_clock::now();
    if (run < 2) continue;
    forward.push_back(std::chrono::duration<double>(middle - start).count());
    backward.push_back(std::chrono::duration<double>(end - middle).count());
  }
  return {median(forward), median(backward)};
}

// The model's parameters, each once (the tied weight is registered twice).
std::vector<at::Tensor> uniqueParameters(const torch::nn::Module& model) {
  std::vector<at::Tensor> unique;
  std::set<c10::TensorImpl*> seen;
  for (const at::Tensor& p : model.parameters())
    if (seen.insert(p.unsafeGetTensorImpl()).second) unique.push_back(p);
  return unique;
}

// Each layer's forward and backward: the median over several profiler rounds
// of each round's median.
std::vector<pipeline::LayerProfile> medianProfile(const torch::nn::Sequential& model,
                                                  const at::Tensor& ids) {
  pipeline::LayerList layers = pipeline::layersOf(model);
  std::vector<std::vector<pipeline::LayerProfile>> rounds;
  auto runs = [](int warmup) {
    pipeline::ProfileOptions options;
    options.warmup = warmup;
    options.repetitions = 5;
    return options;
  };
  rounds.push_back(pipeline::profileLayers(layers, ids, at::kCPU, runs(3)));
  for (int round = 1; round < kProfileRounds; ++round)
    rounds.push_back(pipeline::profileLayers(layers, ids, at::kCPU, runs(1)));
  std::vector<pipeline::LayerProfile> profile = rounds.front();
  for (size_t i = 0; i < profile.size(); ++i) {
    std::vector<double> forward, backward;
    for (const auto& round : rounds) {
      forward.push_back(round[i].forwardSeconds);
      backward.push_back(round[i].backwardSeconds);
    }
    profile[i].forwardSeconds = median(forward);
    profile[i].backwardSeconds = median(backward);
  }
  return profile;
}

// The median transformer block's forward and backward seconds (every layer
// but the first, the embedding, and the last, the head).
std::pair<double, double> medianBlock(const std::vector<pipeline::LayerProfile>& profile) {
  std::vector<double> forward, backward;
  for (size_t i = 1; i + 1 < profile.size(); ++i) {
    forward.push_back(profile[i].forwardSeconds);
    backward.push_back(profile[i].backwardSeconds);
  }
  return {median(forward), median(backward)};
}

// The GPT as one shard of a tp = 2 group that moves no data: its blocks take
// a shard's compute, replicated parts (layer norms, residual adds) included.
torch::nn::Sequential tpShardModel(const train::TrainConfig& c) {
  return models::buildGpt(models::gptConfigOf(train::trainingModelSpecOf(c)),
                          std::make_shared<SilentCommunicator>(2));
}

// Per-layer times of the one-process GPT at the micro-batch shape: the
// embedding, the median block, the head plus its loss. Each layer keeps its
// median over several profiler rounds, as the training runs keep their median
// step (this machine is shared; see calibration_tasks.h).
void profileTask(const std::string& dir) {
  torch::set_num_threads(1);
  auto world = World::init();
  ParallelGroups groups = world->parallelGroups(ParallelLayout(1, {}));
  CalibrationGpt gpt = calibrationGpt(groups);
  const train::TrainConfig& c = gpt.config;
  torch::nn::Sequential& model = gpt.model;
  const at::Tensor& ids = gpt.ids;
  std::vector<pipeline::LayerProfile> profile = medianProfile(model, ids);
  auto [blockForward, blockBackward] = medianBlock(profile);
  auto [shardForward, shardBackward] = medianBlock(medianProfile(tpShardModel(c), ids));
  // Half the sequences: what of a block's time does not shrink with its
  // tokens (a cp rank's micro-batch holds S/cp of each sequence).
  at::Tensor half = ids.narrow(0, 0, std::max<int64_t>(1, ids.size(0) / 2));
  auto [halfForward, halfBackward] = medianBlock(medianProfile(model, half));
  auto microBatch = [&] { microBatchStep(model, ids); };
  double microBatchAlone = medianSeconds(microBatch, kMicroBatchRuns);
  at::Tensor output = model->forward(ids).detach();  // [s, b, hidden]
  auto [lossForward, lossBackward] = lossSeconds(model, output, ids);
  writeValues(dir + "/profile.txt",
              {{"embedding_forward_s", profile.front().forwardSeconds},
               {"embedding_backward_s", profile.front().backwardSeconds},
               {"block_forward_s", blockForward},
               {"block_backward_s", blockBackward},
               {"block_tp2_forward_s", shardForward},
               {"block_tp2_backward_s", shardBackward},
               {"block_half_forward_s", halfForward},
               {"block_half_backward_s", halfBackward},
               {"head_forward_s", profile.back().forwardSeconds + lossForward},
               {"head_backward_s", profile.back().backwardSeconds + lossBackward},
               {"optimizer_step_s", optimizerStepSeconds(uniqueParameters(*model))},
               {"microbatch_alone_s", microBatchAlone},
               {"parameters", static_cast<double>(models::gptParameterCount(
                                  models::gptConfigOf(train::modelSpecOf(c))))}});
}

// The waits of tensor parallelism's all-reduce for the rank behind, after
// one block's forward and after four (sync_wait.h), for the planner's
// compute noise (calibration_model.h's fitNoise).
void addNoiseProbes(Values& values, Communicator& both, const std::function<void()>& block,
                    int64_t bytes) {
  constexpr int kShortRuns = 60, kLongRuns = 15;
  auto fourBlocks = [&] {
    for (int i = 0; i < 4; ++i) block();
  };
  for (auto [name, probe] :
       {std::pair{"short", probeSyncWait(both, block, bytes, kShortRuns)},
        std::pair{"long", probeSyncWait(both, fourBlocks, bytes, kLongRuns)}}) {
    std::string prefix = std::string("noise_") + name;
    values[prefix + "_work_s"] = probe.workSeconds;
    values[prefix + "_wait_s"] = probe.waitSeconds;
    values[prefix + "_transfer_s"] = probe.transferSeconds;
  }
}

// Two ranks: the GPT's micro-batch on both at once (the profile task times it
// alone), then the all-reduce and point-to-point the layouts use, idle (from
// 1 KiB to 64 MiB, for the links' rates by message size) and between blocks.
void machineTask(const std::string& dir) {
  torch::set_num_threads(1);
  auto world = World::init();
  ParallelGroups groups = world->parallelGroups(ParallelLayout(2, {1, 2, 1, 1}));
  Communicator& both = *groups.world;
  CalibrationGpt gpt = calibrationGpt(groups);
  const train::TrainConfig& c = gpt.config;
  torch::nn::Sequential& model = gpt.model;
  const at::Tensor& ids = gpt.ids;
  auto microBatch = [&] { microBatchStep(model, ids); };
  std::function<void()> blockForward = blockForwardOf(gpt);
  int64_t tpBytes = tensorParallelBytes(c);
  Values values = {
      {"microbatch_together_s", (both.barrier(), medianSeconds(microBatch, kMicroBatchRuns))},
      {"allreduce_small_s", allReduceSeconds(both, kSmallMessageBytes)},
      {"allreduce_large_s", allReduceSeconds(both, kLargeMessageBytes)},
      {"p2p_small_s", pointToPointSeconds(both, kSmallMessageBytes)},
      {"p2p_large_s", pointToPointSeconds(both, kLargeMessageBytes)},
      {"allreduce_huge_s", allReduceSeconds(both, kHugeMessageBytes)},
      {"p2p_huge_s", pointToPointSeconds(both, kHugeMessageBytes)},
      {"small_bytes", static_cast<double>(kSmallMessageBytes)},
      {"large_bytes", static_cast<double>(kLargeMessageBytes)},
      {"huge_bytes", static_cast<double>(kHugeMessageBytes)},
  };
  addNoiseProbes(values, both, blockForward, tpBytes);
  values["noise_bytes"] = static_cast<double>(tpBytes);
  if (world->rank() == 0) writeValues(dir + "/machine.txt", values);
}

// The time one run of `work` takes while every member of `everyone` runs it
// too: the wall time of `runs` runs on all of them, from a barrier to the end
// of the slowest, over the runs. (A median of each rank's own runs would
// count runs made while other ranks had already finished.)
double crowdedSeconds(const std::function<void()>& work, Communicator& everyone, int runs) {
  work();  // untimed, as medianSeconds does
  everyone.barrier();
  auto start = std::chrono::steady_clock::now();
  for (int run = 0; run < runs; ++run) work();
  everyone.barrier();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
}

// Four ranks as two nodes of two (ranks 0, 1 on one, 2, 3 on the other), all
// busy at once as in training: the GPT's micro-batch on every rank (against
// the profile task's time alone, the slowdown of four workers sharing the
// machine); then a transformer block's forward on every rank, alone and
// followed by an all-reduce in pairs inside the nodes ({0, 1}, {2, 3}) or
// across them ({0, 2}, {1, 3}), as tensor parallelism issues it. What the
// all-reduce adds to the crowded block is what it costs a step here: its
// transfer and the wait for the paired worker, less the time the waiting
// worker's core went to the others (on two cores shared by four workers a
// wait is not lost, which a probe timed from one member's arrival would
// count).
void crowdTask(const std::string& dir) {
  constexpr int kBlockRuns = 100;
  torch::set_num_threads(1);
  auto world = World::init();
  if (world->size() != 4)
    throw std::runtime_error("calibration: the crowd task runs on 4 ranks, not " +
                             std::to_string(world->size()));
  // The whole GPT on every rank (dp 4: its tp group is the rank alone); the
  // pairs of pp 2 x tp 2: its tp pairs are the nodes' pairs, its pp pairs
  // cross the nodes.
  ParallelGroups groups = world->parallelGroups(ParallelLayout(4, {1, 4, 1, 1}));
  ParallelGroups pairs = world->parallelGroups(ParallelLayout(4, {2, 1, 1, 2}));
  CalibrationGpt gpt = calibrationGpt(groups);
  Communicator& everyone = *groups.world;
  auto microBatch = [&] { microBatchStep(gpt.model, gpt.ids); };
  std::function<void()> blockForward = blockForwardOf(gpt);
  int64_t bytes = tensorParallelBytes(gpt.config);
  at::Tensor activations = torch::ones({bytes / 4});
  auto blockThenAllReduce = [&](Communicator& pair) {
    return [&, group = &pair] {
      blockForward();
      group->allReduce(activations);
    };
  };
  Values values = {{"microbatch_crowd_s", crowdedSeconds(microBatch, everyone, kMicroBatchRuns)},
                   {"crowd_bytes", static_cast<double>(bytes)}};
  // The block alone before and after the pairs' runs, so that a drift of the
  // machine's load over the task cancels in the differences.
  double blockBefore = crowdedSeconds(blockForward, everyone, kBlockRuns);
  values["block_allreduce_crowd_intra_s"] =
      crowdedSeconds(blockThenAllReduce(*pairs.tp), everyone, kBlockRuns);
  values["block_allreduce_crowd_inter_s"] =
      crowdedSeconds(blockThenAllReduce(*pairs.pp), everyone, kBlockRuns);
  values["block_crowd_s"] = (blockBefore + crowdedSeconds(blockForward, everyone, kBlockRuns)) / 2;
  if (world->rank() == 0) writeValues(dir + "/crowd.txt", values);
}

// "pp,dp,tp,schedule,cp,cp_algorithm": the median step time of the Trainer
// on that layout.
void trainTask(const std::string& dir, const std::string& layout) {
  std::istringstream in(layout);
  std::string pp, dp, tp, schedule, cp, algorithm;
  bool complete = std::getline(in, pp, ',') && std::getline(in, dp, ',') &&
                  std::getline(in, tp, ',') && std::getline(in, schedule, ',') &&
                  std::getline(in, cp, ',') && std::getline(in, algorithm);
  std::optional<int> ppDegree = parseInt(pp), dpDegree = parseInt(dp), tpDegree = parseInt(tp),
                     cpDegree = parseInt(cp);
  if (!complete || !ppDegree || !dpDegree || !tpDegree || !cpDegree)
    throw std::runtime_error("calibration: bad layout '" + layout +
                             "', want pp,dp,tp,schedule,cp,cp_algorithm");
  auto world = World::init();
  train::TrainConfig config = calibrationConfig(*ppDegree, *dpDegree, *tpDegree, schedule);
  config.parallel.cp = *cpDegree;
  config.parallel.cpAlgorithm = algorithm;
  train::Trainer trainer(config, world);
  for (int i = 0; i < kWarmupSteps; ++i) trainer.step();
  std::vector<double> seconds;
  for (int i = 0; i < kTimedSteps; ++i) seconds.push_back(trainer.step().seconds);
  if (world->rank() == 0) writeValues(dir + "/train.txt", {{"step_s", median(seconds)}});
}

}  // namespace

train::TrainConfig calibrationConfig(int pp, int dp, int tp, const std::string& schedule) {
  train::TrainConfig c;
  c.model.layers = 8;
  c.model.hidden = 256;
  c.model.heads = 4;
  c.model.ffn = 1024;
  c.model.vocab = 256;
  c.model.context = 128;
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.schedule = schedule;
  c.train.globalBatch = 16;
  c.train.microBatch = 2;
  c.train.seqLen = 128;
  c.train.threads = 1;
  c.data.corpusBytes = 200000;
  return c;
}

void runCalibrationTask() {
  std::string task = requiredEnv("STRATA_CALIBRATION_TASK");
  std::string dir = requiredEnv("STRATA_CALIBRATION_DIR");
  if (task == "profile") return profileTask(dir);
  if (task == "machine") return machineTask(dir);
  if (task == "crowd") return crowdTask(dir);
  if (task == "train") return trainTask(dir, requiredEnv("STRATA_CALIBRATION_LAYOUT"));
  throw std::runtime_error("calibration: unknown task '" + task + "'");
}

void writeValues(const std::string& path, const Values& values) {
  std::ofstream out(path);
  out.precision(9);
  for (const auto& [key, value] : values) out << key << " = " << value << "\n";
  if (!out) throw std::runtime_error("calibration: cannot write " + path);
}

Values readValues(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("calibration: no results in " + path);
  Values values;
  std::string key, eq;
  double value = 0;
  while (in >> key >> eq >> value) values[key] = value;
  if (!in.eof()) throw std::runtime_error("calibration: malformed line in " + path);
  return values;
}

}  // namespace strata::bench

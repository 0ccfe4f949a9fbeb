// bench_finetune: LoRA against full fine-tuning of the same model in the
// same layout, two local ranks (tp 2), one thread each.
//
// The model: a Llama of about 19M parameters (6 blocks of 512, 8 query and
// 4 kv heads, SwiGLU 1536, the byte vocabulary), windows of 256 tokens, 2
// micro-batches of 4 per step, fp32, AdamW. LoRA: rank 16, alpha 32, on
// every projection (q, k, v, o, gate, up, down).
//
// finetune_memory, per method: the most tensor memory a rank holds during
//   steady steps (LibTorch's CPU allocator, counted: the model, its
//   gradients, the optimizer's state, activations), the largest over the
//   ranks, and the trained parameters;
//   ratio = lora_peak_bytes / full_peak_bytes; and the planner's peak for
//   the same run and layout (strata plan --config reads the config alike,
//   strata/plan/memory.h), its heaviest rank, with its error against the
//   measured one.
// finetune_step_time: both trainers built side by side, rounds of steps
//   interleaved; ratio = median over rounds of lora_s / full_s.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "strata/config/config_file.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/train_config.h"
#include "strata/report/tensor_memory.h"
#include "strata/runtime/world.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"

namespace {

using namespace strata;
using namespace strata::train;

constexpr int kWarmupSteps = 2;
constexpr int kMemorySteps = 3;
constexpr int kRounds = 5;
constexpr int kStepsPerRound = 2;

TrainConfig benchConfig(bool lora) {
  TrainConfig c;
  c.model.architecture = kLlamaArchitecture;
  c.model.layers = 6;
  c.model.hidden = 512;
  c.model.heads = 8;
  c.model.kvHeads = 4;
  c.model.ffn = 1536;
  c.model.vocab = 256;
  c.model.context = 256;
  c.model.tiedEmbeddings = false;
  c.parallel.tp = 2;
  c.train.seqLen = 256;
  c.train.microBatch = 4;
  c.train.globalBatch = 8;
  c.train.steps = 1000;
  c.train.threads = 1;
  c.data.corpusBytes = 400000;
  if (lora) {
    c.finetune.method = "lora";
    c.finetune.rank = 16;
    c.finetune.alpha = 32;
    c.finetune.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  }
  return c;
}

const char* nameOf(bool lora) { return lora ? "lora" : "full"; }

int64_t maxOverRanks(int64_t value, Communicator& comm) {
  torch::Tensor t = torch::tensor({static_cast<double>(value)}, torch::kDouble);
  comm.allReduce(t, ReduceOp::kMax);
  return static_cast<int64_t>(t.item<double>());
}

double secondsPerStep(Trainer& trainer, Communicator& comm, int steps) {
  comm.barrier();
  auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) trainer.step();
  double local = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  torch::Tensor seconds = torch::tensor({local / steps}, torch::kDouble);
  comm.allReduce(seconds, ReduceOp::kMax);  // the slowest rank sets the pace
  return seconds.item<double>();
}

int64_t trainedParameters(const Trainer& trainer) {
  int64_t count = 0;
  for (const ParameterShard& shard : trainer.parameterShards())
    if (shard.tensor.requires_grad()) count += shard.tensor.numel();
  return count;
}

// The planner's peak per rank for the method's run on this machine's two
// ranks: its heaviest rank's.
double predictedPeakBytes(bool lora) {
  plan::ConfiguredRun run =
      plan::parseTrainConfigText(configToToml(benchConfig(lora)), nameOf(lora));
  plan::Cluster local = plan::clusterPreset("cpu-local");
  local.devicesPerNode = 2;
  plan::TrainingJob job = plan::jobOn(run, local);
  return plan::evaluateLayout(job, run.layout).memory.total();
}

// One method alone: what it holds at most over steady steps, from before
// its trainer is built.
nlohmann::ordered_json measureMemory(bool lora, const std::shared_ptr<World>& world) {
  Communicator& comm = world->comm();
  int64_t before = train::liveTensorBytes();
  train::resetPeakTensorBytes();
  int64_t peak = 0, trained = 0;
  {
    Trainer trainer(benchConfig(lora), world);
    for (int s = 0; s < kWarmupSteps + kMemorySteps; ++s) trainer.step();
    peak = train::peakTensorBytes() - before;
    trained = maxOverRanks(trainedParameters(trainer), comm);
  }
  int64_t measured = maxOverRanks(peak, comm);
  double predicted = predictedPeakBytes(lora);
  return {{"method", nameOf(lora)},
          {"peak_bytes", measured},
          {"trained_parameters_per_rank", trained},
          {"predicted_peak_bytes", jsonNumber(predicted)},
          {"predicted_error", jsonNumber(predicted / static_cast<double>(measured) - 1)}};
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::spawnRanksIfParent(2, argv)) return 0;
  torch::set_num_threads(1);
  strata::train::installTensorMemoryCounter();
  auto world = World::init();
  Communicator& comm = world->comm();
  nlohmann::ordered_json full = measureMemory(false, world);
  nlohmann::ordered_json lora = measureMemory(true, world);
  if (comm.rank() == 0) {
    double ratio = lora["peak_bytes"].get<double>() / full["peak_bytes"].get<double>();
    bench::emitJson({{"bench", "finetune_memory"},
                     {"layout", "tp 2"},
                     {"full", full},
                     {"lora", lora},
                     {"ratio", jsonNumber(ratio)}});
  }
  Trainer fullTrainer(benchConfig(false), world);
  Trainer loraTrainer(benchConfig(true), world);
  secondsPerStep(fullTrainer, comm, kWarmupSteps);
  secondsPerStep(loraTrainer, comm, kWarmupSteps);
  std::vector<double> fullSeconds, loraSeconds, ratios;
  for (int round = 0; round < kRounds; ++round) {
    fullSeconds.push_back(secondsPerStep(fullTrainer, comm, kStepsPerRound));
    loraSeconds.push_back(secondsPerStep(loraTrainer, comm, kStepsPerRound));
    ratios.push_back(loraSeconds.back() / fullSeconds.back());
  }
  if (comm.rank() == 0)
    bench::emitJson({{"bench", "finetune_step_time"},
                     {"layout", "tp 2"},
                     {"full_s", jsonNumber(bench::median(fullSeconds))},
                     {"lora_s", jsonNumber(bench::median(loraSeconds))},
                     {"ratio", jsonNumber(bench::median(ratios))}});
  return 0;
}

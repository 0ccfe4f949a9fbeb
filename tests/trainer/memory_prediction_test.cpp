// Memory you can rely on: the planner's peak per rank (strata/plan/memory.h)
// against what the trainer holds, for the layouts the correctness tests
// train, and its "fits" decision.
//
// Each rank counts the bytes of every live CPU tensor (LibTorch's CPU
// allocator wrapped, strata/report/tensor_memory.h), trains two warm-up
// steps (AdamW makes its state in the first, ZeRO-3 its prefetch plan),
// then three, and keeps the least of those steps' peaks. A Gloo worker
// thread lets go of a finished collective's buffers a moment after its wait
// returns; on a loaded machine a step can still hold the previous one's at
// its peak (up to a gradient bucket, +13% on ZeRO-2 here), and the least
// peak is the one a step reaches by itself. The data is a prepared dataset,
// read through a memory map as a GPU job's host memory would be, and
// collective buffers are ordinary tensors (STRATA_SHM=0), as a GPU's are.
//
// The planner predicts the same job from the same config (read as
// `strata plan --config` reads it). The goal is within 10% of every rank's
// measured peak; GPT's layouts land within 3.5% and the test holds every
// layout to 5% under and 8% over (kUnderTolerance), so that a term lost or
// miscounted shows. Its "fits" must be right with
// the device's usable memory 10% above and 10% below the heaviest rank's
// peak.
//
// A test rather than a benchmark: a rank's byte counts follow from what the
// code allocates, not from timing or other processes (the Gloo lag aside),
// so they hold on a loaded machine, and all layouts take seconds. Each
// prints its rows of docs/planner.md's table ("Memory against the
// trainer"): run build/tests/trainer/memory_prediction_tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "strata/config/config_file.h"
#include "strata/data/prepare.h"
#include "strata/ops/swiglu.h"
#include "strata/plan/cluster.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/train_config.h"
#include "strata/report/tensor_memory.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

constexpr int kWarmupSteps = 2;
constexpr int kMeasuredSteps = 3;
// On each rank's peak: under by at most 5%, over by at most 8%. The Llama
// family's peaks depend on the CPU's kernels: on an AVX2-only EPYC they came
// out 2.7-6.1% below the prediction (tp 2 the most; LibTorch 2.11) where an
// AVX-512 Xeon's were within 5%; GPT's layouts stay within 3.5% on both.
constexpr double kUnderTolerance = 0.05;
constexpr double kOverTolerance = 0.08;
constexpr double kFitMargin = 0.10;  // the device's usable memory off the peak

struct MemoryCase {
  const char* name;
  TrainConfig config;
};

int worldSizeOf(const TrainConfig& c) {
  return static_cast<int>(c.parallel.pp * c.parallel.dp * c.parallel.cp * c.parallel.tp);
}

// PREFIX of a small prepared dataset of many documents in `dir`, made by the
// parent; the ranks, which inherit the folder, only name it.
std::string preparedData(const std::string& dir) {
  std::string prefix = dir + "/corpus";
  if (strata::testing::inRankProcess()) return prefix;
  std::string text = dir + "/corpus.jsonl";
  {
    std::ofstream out(text);
    for (int i = 0; i < 400; ++i)
      out << "{\"text\": \"the quick brown fox " << i << " jumps over the lazy dog\"}\n";
  }
  PrepareOptions options;
  options.inputs = {text};
  options.output = prefix;
  options.threads = 1;
  prepareData(options);
  return prefix;
}

// On every rank: its pp coordinate and the least and most of the measured
// steps' peaks, written to dir.
void measureRank(const TrainConfig& config, const std::string& dir, int rank) {
  installTensorMemoryCounter();  // before the trainer makes any tensor
  Trainer trainer(config, World::init());
  trainSteps(trainer, kWarmupSteps);
  double least = 0, most = 0;
  for (int i = 0; i < kMeasuredSteps; ++i) {
    resetPeakTensorBytes();
    trainSteps(trainer, 1);
    double peak = static_cast<double>(peakTensorBytes());
    least = i == 0 ? peak : std::min(least, peak);
    most = std::max(most, peak);
  }
  writeValues(dir, "memory", rank, {double(trainer.groups().coord.pp), least, most});
}

struct Measured {
  int pp = 0;
  double peak = 0;   // the least step's
  double worst = 0;  // the most any step held
};

std::vector<Measured> measure(const std::string& dir, const TrainConfig& config) {
  strata::testing::MultiProcessOptions options = sharedDirOptions(dir);
  options.env["STRATA_SHM"] = "0";
  int world = worldSizeOf(config);
  strata::testing::runInProcesses(
      world, [&](const strata::testing::RankContext& ctx) { measureRank(config, dir, ctx.rank); },
      options);
  std::vector<Measured> ranks;
  for (int r = 0; r < world; ++r) {
    std::vector<double> v = readValues(dir, "memory", r);
    ranks.push_back({static_cast<int>(v.at(0)), v.at(1), v.at(2)});
  }
  return ranks;
}

// The planner's job for `config`, as `strata plan --config` makes it, on
// one node of the job's size whose usable memory (90%) is `usableBytes`.
plan::TrainingJob planJob(const TrainConfig& config, const std::string& name, double usableBytes,
                          plan::Layout& layout) {
  plan::ConfiguredRun run = plan::parseTrainConfigText(configToToml(config), name);
  plan::Cluster node = plan::clusterPreset("cpu-local");
  node.devicesPerNode = worldSizeOf(config);
  node.device.memoryBytes = usableBytes / 0.9;
  layout = run.layout;
  return plan::jobOn(run, node);
}

// A markdown row of docs/planner.md's table.
void printRow(const std::string& name, int rank, const Measured& m,
              const plan::MemoryBreakdown& predicted) {
  double state = predicted.parameters + predicted.gradients + predicted.optimizer;
  std::printf("| %s | %d (pp %d) | %.0f | %+.1f%% | %.0f | %+.1f%% | %.0f + %.0f + %.0f |\n",
              name.c_str(), rank, m.pp, m.peak / 1024, 100 * (m.worst / m.peak - 1),
              predicted.total() / 1024, 100 * (predicted.total() / m.peak - 1), state / 1024,
              predicted.activations / 1024, predicted.buffers / 1024);
}

class MemoryPrediction : public ::testing::TestWithParam<MemoryCase> {};

TEST_P(MemoryPrediction, PlannerPredictsEveryRanksPeak) {
  const MemoryCase& c = GetParam();
  std::string dir = sharedDir(std::string("memory_") + c.name);
  TrainConfig config = c.config;
  config.data.prepared = preparedData(dir);
  std::vector<Measured> ranks = measure(dir, config);
  removeSharedDir(dir);

  double heaviest = 0;
  for (const Measured& m : ranks) heaviest = std::max(heaviest, m.peak);
  plan::Layout layout;
  plan::TrainingJob job = planJob(config, c.name, heaviest, layout);
  plan::Estimate e = plan::evaluateLayout(job, layout);
  for (size_t r = 0; r < ranks.size(); ++r) {
    const plan::MemoryBreakdown& predicted = e.rankMemory.at(ranks[r].pp);
    printRow(c.name, static_cast<int>(r), ranks[r], predicted);
    double ratio = predicted.total() / ranks[r].peak;
    EXPECT_GE(ratio, 1 - kUnderTolerance) << c.name << " rank " << r;
    EXPECT_LE(ratio, 1 + kOverTolerance) << c.name << " rank " << r;
  }
  // The run fits a device whose usable memory is 10% above its heaviest
  // rank's peak and does not fit one 10% below: the planner must say so.
  for (double margin : {1 + kFitMargin, 1 / (1 + kFitMargin)}) {
    bool fits = margin > 1;
    EXPECT_EQ(
        plan::evaluateLayout(planJob(config, c.name, margin * heaviest, layout), layout).fitsMemory,
        fits)
        << c.name << " on a device of " << margin << " x its peak";
  }
}

TrainConfig layout(TrainConfig c, int64_t pp, int64_t dp, int64_t tp) {
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  return c;
}

TrainConfig with(TrainConfig c, const std::function<void(TrainConfig&)>& change) {
  change(c);
  return c;
}

// LoRA adapters on `targets` of a frozen base.
TrainConfig lora(TrainConfig c, std::vector<std::string> targets) {
  c.finetune.method = "lora";
  c.finetune.rank = 4;
  c.finetune.targets = std::move(targets);
  return c;
}

const std::vector<std::string> kAllTargets = {"q", "k", "v", "o", "gate", "up", "down"};

// The V and interleaved schedules cut the six layers (embedding, 4 blocks,
// head) as the planner does: the embedding with the first block, the head
// with the last (the trainer's even cut would put 2, 2, 1, 1).
std::vector<MemoryCase> layouts() {
  TrainConfig gpt = tinyConfig(), llama = tinyLlamaConfig(2), moe = tinyMoeConfig();
  auto schedule = [](const std::string& name, int64_t virtualStages) {
    return [name, virtualStages](TrainConfig& c) {
      c.parallel.schedule = name;
      c.parallel.virtualStages = virtualStages;
      c.parallel.stageLayers = {2, 1, 1, 2};
    };
  };
  return {
      {"one_process", gpt},
      {"dp2", layout(gpt, 1, 2, 1)},
      {"tp2", layout(gpt, 1, 1, 2)},
      {"tp2_sp",
       with(layout(gpt, 1, 1, 2), [](TrainConfig& c) { c.parallel.sequenceParallel = true; })},
      {"pp2_1f1b", layout(gpt, 2, 1, 1)},
      // Enough micro-batches that sends held to the end of the step would
      // add a tenth to a rank's peak.
      {"pp2_1f1b_32_microbatches", with(layout(gpt, 2, 1, 1),
                                        [](TrainConfig& c) {
                                          c.train.globalBatch = 32;
                                          c.train.microBatch = 1;
                                        })},
      {"pp2_gpipe",
       with(layout(gpt, 2, 1, 1), [](TrainConfig& c) { c.parallel.schedule = "gpipe"; })},
      {"pp2_interleaved", with(layout(gpt, 2, 1, 1), schedule("interleaved-1f1b", 2))},
      {"pp2_zbv", with(layout(gpt, 2, 1, 1), schedule("zb-v", 1))},
      {"pp2_zbv_recompute", with(with(layout(gpt, 2, 1, 1), schedule("zb-v", 1)),
                                 [](TrainConfig& c) { c.parallel.checkpointActivations = true; })},
      {"pp2_dualpipev", with(layout(gpt, 2, 1, 1), schedule("dualpipe-v", 1))},
      {"dp2_zero1", with(layout(gpt, 1, 2, 1), [](TrainConfig& c) { c.parallel.zero = 1; })},
      {"dp2_zero2", with(layout(gpt, 1, 2, 1), [](TrainConfig& c) { c.parallel.zero = 2; })},
      {"dp2_zero3", with(layout(gpt, 1, 2, 1), [](TrainConfig& c) { c.parallel.zero = 3; })},
      {"pp2_dp2_zero1", with(layout(gpt, 2, 2, 1), [](TrainConfig& c) { c.parallel.zero = 1; })},
      {"recompute", with(gpt, [](TrainConfig& c) { c.parallel.checkpointActivations = true; })},
      {"pp2_recompute",
       with(layout(gpt, 2, 1, 1), [](TrainConfig& c) { c.parallel.checkpointActivations = true; })},
      {"dropout", with(gpt, [](TrainConfig& c) { c.model.dropout = 0.1; })},
      {"cp2_ring", with(gpt, [](TrainConfig& c) { c.parallel.cp = 2; })},
      {"llama", llama},
      {"llama_tp2", layout(llama, 1, 1, 2)},
      {"llama_lora", lora(llama, {"q", "v"})},
      {"llama_lora_all_targets_tp2", layout(lora(llama, kAllTargets), 1, 1, 2)},
      {"llama_lora_tp2_sp", with(layout(lora(llama, {"q", "k", "o", "down"}), 1, 1, 2),
                                 [](TrainConfig& c) { c.parallel.sequenceParallel = true; })},
      {"llama_lora_pp2", layout(lora(llama, kAllTargets), 2, 1, 1)},
      {"llama_lora_dp2_zero1",
       with(layout(lora(llama, {"q", "v"}), 1, 2, 1), [](TrainConfig& c) { c.parallel.zero = 1; })},
      {"llama_lora_dropout_tp2", with(layout(lora(llama, kAllTargets), 1, 1, 2),
                                      [](TrainConfig& c) { c.finetune.dropout = 0.1; })},
      {"llama_lora_dp2_zero3", with(layout(lora(llama, kAllTargets), 1, 2, 1),
                                    [](TrainConfig& c) { c.parallel.zero = 3; })},
      {"moe", moe},
      {"moe_dp2_ep2", with(layout(moe, 1, 2, 1), [](TrainConfig& c) { c.parallel.ep = 2; })},
      {"moe_lora_experts_dp2_ep2",
       with(layout(lora(moe, kAllTargets), 1, 2, 1), [](TrainConfig& c) { c.parallel.ep = 2; })},
  };
}

// The planner's local CPU counts SwiGLU's backward as the kernel the trainer
// takes on this CPU holds it (rows llama*).
TEST(MemoryPredictionDevice, SwigluBackwardAsTheTrainersKernel) {
  torch::Tensor x = torch::zeros({2, 16});
  EXPECT_EQ(plan::clusterPreset("cpu-local").device.fusedSwigluBackward,
            ops::swigluUsesOwnKernel(x, x));
}

INSTANTIATE_TEST_SUITE_P(Layouts, MemoryPrediction, ::testing::ValuesIn(layouts()),
                         [](const ::testing::TestParamInfo<MemoryCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace strata::train::testing

// The in-process path (every stage in this process, each on its own device;
// all on the CPU here), cutting, errors, automatic partitioning and traces.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <thread>

#include "heavy_first_model.h"
#include "pipeline_fixtures.h"
#include "strata/error.h"
#include "strata/pipeline/pipeline.h"
#include "strata/pipeline/profiler.h"
#include "strata/pipeline/split.h"
#include "strata/pipeline/trace.h"
#include "strata/schedule/chrome_trace.h"
#include "strata/schedule/svg.h"

namespace strata::pipeline::testing {
namespace {

std::vector<at::Device> cpus(int n) { return std::vector<at::Device>(n, at::kCPU); }

TEST(PipelineSplit, CountsCoverEveryLayerOnce) {
  EXPECT_EQ(evenCounts(9, 4), (std::vector<int>{3, 2, 2, 2}));
  torch::nn::Sequential model = makeMlp(kSeed);
  LayerList layers = layersOf(model);
  std::vector<Stage> stages = splitByCounts(layers, {2, 3, 4}, cpus(3), {true, false, true});
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].firstLayer(), 0);
  EXPECT_EQ(stages[1].index(), 2);
  EXPECT_EQ(stages[1].firstLayer(), 5);
  EXPECT_EQ(stages[1].numLayers(), 4);
  // The stage shares the model's module: no copy.
  EXPECT_EQ(stages[1].layers()[0].ptr().get(), model->ptr(5).get());
}

TEST(PipelineSplit, DevicePerLayerGroupsRuns) {
  at::Device a("cpu"), b("meta");
  DevicePlacement placement = placementFromLayerDevices({a, a, b, b, b, a});
  EXPECT_EQ(placement.layersPerStage, (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(placement.stageDevices, (std::vector<at::Device>{a, b, a}));
}

TEST(PipelineSplit, BadCutsAreConfigErrors) {
  EXPECT_THROW(evenCounts(3, 4), ConfigError);
  EXPECT_THROW(checkCounts({2, 0, 7}, 9), ConfigError);
  EXPECT_THROW(checkCounts({2, 2}, 9), ConfigError);
  PipelineOptions options;
  options.schedule = "gpipe";
  EXPECT_THROW(Pipeline(makeMlp(kSeed, 3), cpus(4), options), ConfigError);
  options.layersPerStage = {4, 4};
  EXPECT_THROW(Pipeline(makeMlp(kSeed), cpus(2), options), ConfigError);
  options.layersPerStage = {9};
  EXPECT_THROW(Pipeline(makeMlp(kSeed), cpus(2), options), ConfigError);
}

// What a rank builds before any model exists: its stages' layers, as the
// schedule places the stages.
TEST(PipelineSplit, LayersHeldByEachRankBeforeAnyModel) {
  using Mask = std::vector<bool>;
  PipelineOptions options;
  options.microbatches = 2;
  EXPECT_EQ(layersHeldBy(7, 2, 0, options), (Mask{1, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(layersHeldBy(7, 2, 1, options), (Mask{0, 0, 0, 0, 1, 1, 1}));
  options.schedule = "interleaved-1f1b";  // stage s on rank s % 2
  options.virtualStages = 2;
  EXPECT_EQ(layersHeldBy(8, 2, 0, options), (Mask{1, 1, 0, 0, 1, 1, 0, 0}));
  options.schedule = "zb-v";  // rank 0 holds the first and the last stage
  options.virtualStages = 1;
  EXPECT_EQ(layersHeldBy(8, 2, 0, options), (Mask{1, 1, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(layersHeldBy(8, 2, 1, options), (Mask{0, 0, 1, 1, 1, 1, 0, 0}));
  options.schedule = "1f1b";
  options.layersPerStage = {1, 5};
  options.autoPartition = true;  // an explicit cut wins, as in the constructor
  EXPECT_EQ(layersHeldBy(6, 2, 1, options), (Mask{0, 1, 1, 1, 1, 1}));
  options.layersPerStage.clear();
  EXPECT_TRUE(layersHeldBy(6, 2, 1, options).empty()) << "a measured cut is not known yet";
  options.layersPerStage = {4, 4};
  EXPECT_THROW(layersHeldBy(6, 2, 0, options), ConfigError);
}

TEST(PipelineOptionsCheck, BadScheduleOrBatchIsConfigError) {
  PipelineOptions options;
  options.schedule = "no-such-schedule";
  EXPECT_THROW(Pipeline(makeMlp(kSeed), cpus(2), options), ConfigError);
  options.schedule = "interleaved-1f1b";
  options.virtualStages = 2;
  options.microbatches = 3;  // not a multiple of 2 ranks
  EXPECT_THROW(Pipeline(makeMlp(kSeed), cpus(2), options), ConfigError);
  options.schedule = "1f1b";
  options.virtualStages = 1;
  options.microbatches = 4;
  Pipeline pipe(makeMlp(kSeed), cpus(2), options);
  auto [x, t] = batchFor(0, 6);
  EXPECT_THROW(pipe.step(x, t, mseLoss), ConfigError);
  options.autoPartition = true;
  EXPECT_THROW(Pipeline(makeMlp(kSeed), cpus(2), options), ConfigError);
}

TEST(PipelineInProcess, MatchesSerialForEverySchedule) {
  for (int p : {2, 3, 4}) {
    for (const Config& config : matrixFor(p)) {
      int64_t batch = 2 * config.microbatches;
      Trained serial = trainSerial(kSeed, batch);
      torch::nn::Sequential model = makeMlp(kSeed);
      Pipeline pipe(model, cpus(p), config.options());
      Trained piped = trainPipelined(pipe, model, batch);
      expectMatchesSerial(pipe, piped, serial, "in-process " + config.describe(p));
      expectEvaluateMatchesSerial(pipe, serial, batch, "in-process " + config.describe(p));
    }
  }
}

TEST(PipelineInProcess, CheckpointingStashesOnlyStageInputs) {
  PipelineOptions options;
  options.schedule = "gpipe";
  options.microbatches = 4;
  auto [x, t] = batchFor(0, 8);
  Pipeline plain(makeMlp(kSeed), cpus(2), options);
  plain.step(x, t, mseLoss);
  options.checkpointActivations = true;
  Pipeline checkpointed(makeMlp(kSeed), cpus(2), options);
  checkpointed.step(x, t, mseLoss);
  // GPipe stashes all 4 micro-batches of both stages: 4 x 2 inputs of [2, 6]
  // floats when checkpointed, every layer output otherwise.
  EXPECT_EQ(checkpointed.lastStep().peakStashBytes, 4 * 2 * 2 * kWidth * 4);
  EXPECT_GT(plain.lastStep().peakStashBytes, 2 * checkpointed.lastStep().peakStashBytes);
}

// Dropout and batch norm: layers whose forward reads more than its input.
torch::nn::Sequential noisyModel() {
  torch::manual_seed(kSeed);
  torch::nn::Sequential model;
  model->push_back(torch::nn::Linear(kWidth, kWidth));
  model->push_back(torch::nn::Dropout(0.5));
  model->push_back(torch::nn::BatchNorm1d(kWidth));
  model->push_back(torch::nn::Tanh());
  model->push_back(torch::nn::Linear(kWidth, kWidth));
  model->push_back(torch::nn::Dropout(0.3));
  model->push_back(torch::nn::Linear(kWidth, kWidth));
  return model;
}

struct NoisyStep {
  double loss;
  std::vector<torch::Tensor> grads, buffers;
};

NoisyStep noisyStep(bool checkpoint) {
  torch::nn::Sequential model = noisyModel();
  PipelineOptions options;
  options.schedule = "gpipe";  // every forward runs before the first recompute
  options.microbatches = 4;
  options.checkpointActivations = checkpoint;
  Pipeline pipe(model, cpus(2), options);
  auto [x, t] = batchFor(0, 8);
  torch::manual_seed(99);
  NoisyStep result{pipe.step(x, t, mseLoss), {}, {}};
  for (const auto& p : model->parameters()) result.grads.push_back(p.grad().clone());
  for (const auto& b : model->buffers()) result.buffers.push_back(b.clone());
  return result;
}

// The recompute draws the masks the first forward drew and does not update
// the batch-norm statistics a second time, so checkpointing changes nothing.
TEST(PipelineInProcess, CheckpointingReplaysDropoutMasksAndBuffers) {
  NoisyStep plain = noisyStep(false), checkpointed = noisyStep(true);
  EXPECT_EQ(checkpointed.loss, plain.loss);
  ASSERT_EQ(checkpointed.grads.size(), plain.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    EXPECT_TRUE(torch::allclose(checkpointed.grads[i], plain.grads[i], 1e-6, 1e-7))
        << "gradient " << i;
  }
  for (size_t i = 0; i < plain.buffers.size(); ++i) {
    EXPECT_TRUE(torch::equal(checkpointed.buffers[i], plain.buffers[i])) << "buffer " << i;
  }
}

TEST(PipelineAutoPartition, BeatsEqualCountsOnAHeavyLayer) {
  torch::nn::Sequential model = strata::testing::heavyFirstModel(kSeed, 64);
  torch::Tensor sample = torch::randn({256, 64});
  std::vector<plan::LayerCost> costs =
      toLayerCosts(profileLayers(layersOf(model), sample, at::kCPU), 1);
  plan::Partition equal = plan::partitionByCounts(costs, evenCounts(8, 2));
  plan::Partition balanced = plan::partitionBalanced(costs, 2);
  EXPECT_LT(balanced.slowestSeconds(), equal.slowestSeconds())
      << "equal:\n"
      << formatPartition(equal) << "auto:\n"
      << formatPartition(balanced);

  // The Pipeline's automatic cut trains like the serial model.
  PipelineOptions options;
  options.microbatches = 2;
  options.autoPartition = true;
  options.profileInput = sample.narrow(0, 0, 4);
  options.profile.repetitions = 2;
  Pipeline pipe(model, cpus(2), options);
  EXPECT_EQ(pipe.partition().stages.size(), 2u);
  EXPECT_NE(pipe.partitionTable().find("slowest stage"), std::string::npos);
  for (const at::Tensor& parameter : model->parameters()) EXPECT_FALSE(parameter.grad().defined());
}

// lastLayerLoss: the last layer is timed with the loss of its output, its
// forward and backward both; the other layers are not. The loss sleeps
// 400 ms each way, far above what the small linear layers take.
TEST(PipelineProfile, TimesTheLastLayerWithItsLoss) {
  torch::nn::Sequential model(torch::nn::Linear(8, 8), torch::nn::Linear(8, 8));
  ProfileOptions options;
  options.warmup = 0;
  options.repetitions = 1;
  const double kSleep = 0.4;
  auto nap = [kSleep] { std::this_thread::sleep_for(std::chrono::duration<double>(kSleep)); };
  options.lastLayerLoss = [&](const at::Tensor& output) {
    nap();
    // Backward runs the hook before the gradient reaches the layer.
    at::Tensor loss = output.square().mean();
    loss.register_hook([&](const at::Tensor& grad) {
      nap();
      return grad;
    });
    return loss;
  };
  std::vector<LayerProfile> profiles =
      profileLayers(layersOf(model), torch::randn({4, 8}), at::kCPU, options);
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_GE(profiles[1].forwardSeconds, kSleep);
  EXPECT_GE(profiles[1].backwardSeconds, kSleep);
  EXPECT_LT(profiles[0].forwardSeconds + profiles[0].backwardSeconds, kSleep);
  for (const at::Tensor& parameter : model->parameters()) EXPECT_FALSE(parameter.grad().defined());
}

TEST(PipelineTrace, RecordsEveryActionAndRenders) {
  PipelineOptions options;
  options.schedule = "zb-h1";
  options.microbatches = 4;
  options.trace = true;
  Pipeline pipe(makeMlp(kSeed), cpus(2), options);
  auto [x, t] = batchFor(0, 8);
  pipe.step(x, t, mseLoss);
  const std::vector<TraceEvent>& events = pipe.lastStep().events;
  int actions = 0;
  for (const TraceEvent& e : events) actions += e.isWait ? 0 : 1;
  EXPECT_EQ(actions, static_cast<int>(pipe.schedule().actionCount()));
  schedule::Timeline timeline = toTimeline(events, 2, earliestStart(events));
  std::string svg = schedule::renderSvg(timeline, "measured");
  std::size_t blocks = 0;
  for (std::size_t at = svg.find("class=\"action\""); at != std::string::npos;
       at = svg.find("class=\"action\"", at + 1)) {
    ++blocks;
  }
  EXPECT_EQ(blocks, events.size());
  EXPECT_NE(schedule::toChromeTrace(timeline).find("\"1W3\""), std::string::npos);
  std::vector<schedule::StageCosts> costs = measuredStageCosts(events, 2);
  EXPECT_GT(costs[1].forward, 0);
  EXPECT_GT(costs[1].backwardWeight, 0);
}

}  // namespace
}  // namespace strata::pipeline::testing

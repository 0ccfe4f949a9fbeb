// Data parallelism inside a pipeline step: turning the gradient sync on at
// the pipeline's StepHooks::beforeLastWeightGradients starts every bucket's
// reduction during the step (none is left for after it) when each rank holds
// one stage, and the gradients equal those of syncing only after the step,
// for every schedule. With a replica set per model chunk, each turned on at
// StepHooks::beforeStageLastWeightGradients, every bucket also reduces during
// the step when a rank runs two chunks (interleaved, the V schedules).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <memory>

#include "multiprocess.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/pipeline/pipeline.h"
#include "strata/runtime/world.h"

namespace strata::data_parallel {
namespace {

using strata::testing::RankContext;

constexpr int kWidth = 8;

torch::nn::Sequential tanhMlp() {
  torch::manual_seed(11);
  torch::nn::Sequential model;
  for (int i = 0; i < 4; ++i) {
    model->push_back(torch::nn::Linear(kWidth, kWidth));
    model->push_back(torch::nn::Tanh());
  }
  return model;
}

struct Synced {
  std::vector<torch::Tensor> grads;
  int startedDuringStep = 0;
  int buckets = 0;
};

// One step of a two-stage in-process pipeline on each replica; the sync goes
// on at the hook (`overlap`) or only after the step.
Synced pipelinedStep(const pipeline::PipelineOptions& options, Communicator& dp, bool overlap) {
  torch::nn::Sequential model = tanhMlp();
  pipeline::Pipeline pipe(model, std::vector<at::Device>(2, at::kCPU), options);
  DataParallelOptions dpOptions;
  dpOptions.buckets = {64 * 4, 64 * 4};  // several buckets of a few parameters
  DataParallel replicas(*model, dp, dpOptions);
  torch::manual_seed(20 + dp.rank());
  torch::Tensor x = torch::randn({12, kWidth}), t = torch::randn({12, kWidth});
  pipeline::StepHooks hooks;
  if (overlap) hooks.beforeLastWeightGradients = [&] { replicas.setRequireSync(true); };
  replicas.setRequireSync(false);
  pipe.step(
      x, t,
      [](const at::Tensor& y, const at::Tensor& target) { return torch::mse_loss(y, target); },
      hooks);
  Synced result;
  result.startedDuringStep = replicas.startedBuckets();
  result.buckets = static_cast<int>(replicas.layout().buckets().size());
  replicas.setRequireSync(true);
  replicas.finishGradientSync();
  for (const auto& p : model->parameters()) result.grads.push_back(p.grad().clone());
  return result;
}

TEST(DataParallelInPipeline, BucketsReduceDuringTheLastMicroBatchForEverySchedule) {
  strata::testing::runInProcesses(2, [](const RankContext&) {
    auto world = World::init();
    struct Case {
      const char* schedule;
      int microbatches;
      int virtualStages;
    };
    for (Case c : {Case{"gpipe", 3, 1}, Case{"1f1b", 4, 1}, Case{"zb-h1", 4, 1},
                   Case{"interleaved-1f1b", 4, 2}, Case{"1f1b", 1, 1}}) {
      pipeline::PipelineOptions options;
      options.schedule = c.schedule;
      options.microbatches = c.microbatches;
      options.virtualStages = c.virtualStages;
      std::string what = std::string(c.schedule) + " m=" + std::to_string(c.microbatches);
      Synced after = pipelinedStep(options, world->comm(), false);
      Synced overlapped = pipelinedStep(options, world->comm(), true);
      EXPECT_GT(overlapped.buckets, 2) << what;
      EXPECT_EQ(after.startedDuringStep, 0) << what;
      // A rank's interleaved chunks finish at different times: the hook comes
      // only before the last chunk's final gradients, and the buckets holding
      // the other chunks wait for the end of the step.
      if (c.virtualStages == 1) {
        EXPECT_EQ(overlapped.startedDuringStep, overlapped.buckets) << what;
      }
      for (size_t i = 0; i < after.grads.size(); ++i) {
        EXPECT_TRUE(torch::allclose(overlapped.grads[i], after.grads[i], 1e-6, 1e-7))
            << what << ", gradient " << i;
      }
    }
  });
}

// One set per stage, each turned on before its own stage's last weight
// gradients.
Synced perChunkStep(const pipeline::PipelineOptions& options, Communicator& dp) {
  torch::nn::Sequential model = tanhMlp();
  pipeline::Pipeline pipe(model, std::vector<at::Device>(2, at::kCPU), options);
  DataParallelOptions dpOptions;
  dpOptions.buckets = {64 * 4, 64 * 4};
  std::map<int, std::unique_ptr<DataParallel>> sets;
  for (const pipeline::Stage& stage : pipe.stages()) {
    std::vector<NamedTensor> named;
    for (const at::Tensor& p : stage.parameters())
      named.push_back(
          {"stage" + std::to_string(stage.index()) + "." + std::to_string(named.size()), p});
    sets[stage.index()] = std::make_unique<DataParallel>(named, dp, dpOptions);
    sets[stage.index()]->setRequireSync(false);
  }
  torch::manual_seed(20 + dp.rank());
  torch::Tensor x = torch::randn({12, kWidth}), t = torch::randn({12, kWidth});
  pipeline::StepHooks hooks;
  hooks.beforeStageLastWeightGradients = [&](int stage) { sets.at(stage)->setRequireSync(true); };
  pipe.step(
      x, t,
      [](const at::Tensor& y, const at::Tensor& target) { return torch::mse_loss(y, target); },
      hooks);
  Synced result;
  for (auto& [stage, set] : sets) {
    result.startedDuringStep += set->startedBuckets();
    result.buckets += static_cast<int>(set->layout().buckets().size());
    set->setRequireSync(true);
    set->finishGradientSync();
  }
  for (const auto& p : model->parameters()) result.grads.push_back(p.grad().clone());
  return result;
}

TEST(DataParallelInPipeline, EachChunksBucketsReduceAsThatChunkFinishes) {
  strata::testing::runInProcesses(2, [](const RankContext&) {
    auto world = World::init();
    for (const char* schedule : {"interleaved-1f1b", "zb-v", "dualpipe-v"}) {
      pipeline::PipelineOptions options;
      options.schedule = schedule;
      options.microbatches = 4;
      options.virtualStages = std::string(schedule) == "interleaved-1f1b" ? 2 : 1;
      Synced after = pipelinedStep(options, world->comm(), false);
      Synced chunked = perChunkStep(options, world->comm());
      EXPECT_GE(chunked.buckets, 4) << schedule;  // a bucket or more per stage
      EXPECT_EQ(chunked.startedDuringStep, chunked.buckets) << schedule;
      for (size_t i = 0; i < after.grads.size(); ++i) {
        EXPECT_TRUE(torch::allclose(chunked.grads[i], after.grads[i], 1e-6, 1e-7))
            << schedule << ", gradient " << i;
      }
    }
  });
}

}  // namespace
}  // namespace strata::data_parallel

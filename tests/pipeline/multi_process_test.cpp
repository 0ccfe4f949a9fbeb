// Parallel equals serial across processes: every rank trains its stages of
// the pipeline and compares them with the serial model it trains itself.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <thread>

#include "multiprocess.h"
#include "pipeline_fixtures.h"
#include "strata/pipeline/pipeline.h"
#include "strata/pipeline/trace.h"
#include "strata/runtime/world.h"

namespace strata::pipeline::testing {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;

void trainMatrix(const RankContext& ctx) {
  auto world = World::init();
  ParallelDegrees degrees;
  degrees.pp = ctx.worldSize;
  ParallelGroups groups = world->parallelGroups(ParallelLayout(world->size(), degrees));
  for (const Config& config : matrixFor(ctx.worldSize)) {
    int64_t batch = 2 * config.microbatches;
    Trained serial = trainSerial(kSeed, batch);
    torch::nn::Sequential model = makeMlp(kSeed);
    Pipeline pipe(model, groups, config.options());
    Trained piped = trainPipelined(pipe, model, batch);
    std::string what = "rank " + std::to_string(ctx.rank) + " " + config.describe(ctx.worldSize);
    expectMatchesSerial(pipe, piped, serial, what);
    expectEvaluateMatchesSerial(pipe, serial, batch, what);
  }
}

TEST(PipelineMultiProcess, MatchesSerialOnTwoRanks) { runInProcesses(2, trainMatrix); }
TEST(PipelineMultiProcess, MatchesSerialOnThreeRanks) { runInProcesses(3, trainMatrix); }
TEST(PipelineMultiProcess, MatchesSerialOnFourRanks) { runInProcesses(4, trainMatrix); }

// Automatic partitioning averages the profile over the group, so both ranks
// cut alike; the trace gathers every rank's actions on rank 0.
TEST(PipelineMultiProcess, AutoPartitionAndGatheredTrace) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    ParallelDegrees degrees;
    degrees.pp = 2;
    ParallelGroups groups = world->parallelGroups(ParallelLayout(2, degrees));
    PipelineOptions options;
    options.schedule = "1f1b";
    options.microbatches = 4;
    options.autoPartition = true;
    options.profileInput = torch::randn({2, kWidth});
    options.profile.repetitions = 2;
    options.trace = true;
    torch::nn::Sequential model = makeMlp(kSeed);
    Pipeline pipe(model, groups, options);
    Trained piped = trainPipelined(pipe, model, 8);
    expectMatchesSerial(pipe, piped, trainSerial(kSeed, 8), "auto partition");

    std::vector<TraceEvent> events = gatherEvents(*groups.pp, pipe.lastStep().events);
    int actions = 0;
    for (const TraceEvent& e : events) actions += e.isWait ? 0 : 1;
    int expected = ctx.rank == 0 ? static_cast<int>(pipe.schedule().actionCount())
                                 : static_cast<int>(pipe.schedule().actions(1).size());
    EXPECT_EQ(actions, expected);
  });
}

// A linear layer whose forward first sleeps: the profile measures it as slow.
struct SleepingLinearImpl : torch::nn::Module {
  explicit SleepingLinearImpl(int sleepMs)
      : sleep(sleepMs), linear(register_module("linear", torch::nn::Linear(kWidth, kWidth))) {}
  at::Tensor forward(const at::Tensor& x) {
    std::this_thread::sleep_for(sleep);
    return linear(x);
  }
  std::chrono::milliseconds sleep;
  torch::nn::Linear linear;
};
TORCH_MODULE(SleepingLinear);

// pp 2 x tp 2: the stage's two tp peers are in different pp groups. Layer 0
// is slow (60 ms) on the tp rank 1 peers only, the others take 5 ms: alone,
// the tp 0 group would cut 2 | 2 and the tp 1 group 1 | 3. The average over
// every rank (32.5 ms) gives 1 | 3 on all four.
TEST(PipelineMultiProcess, AutoPartitionCutsAlikeOnTensorParallelPeers) {
  runInProcesses(4, [](const RankContext&) {
    auto world = World::init();
    ParallelDegrees degrees;
    degrees.pp = 2;
    degrees.tp = 2;
    ParallelGroups groups = world->parallelGroups(ParallelLayout(4, degrees));
    torch::nn::Sequential model;
    for (int layer = 0; layer < 4; ++layer)
      model->push_back(SleepingLinear(layer == 0 && groups.coord.tp == 1 ? 60 : 5));
    PipelineOptions options;
    options.microbatches = 2;
    options.autoPartition = true;
    options.profileInput = torch::randn({2, kWidth});
    options.profile.warmup = 1;
    options.profile.repetitions = 3;
    Pipeline pipe(model, groups, options);
    EXPECT_EQ(pipe.partition().counts(), (std::vector<int>{1, 3})) << "rank " << world->rank();
  });
}

}  // namespace
}  // namespace strata::pipeline::testing

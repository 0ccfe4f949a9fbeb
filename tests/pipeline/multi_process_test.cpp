// Parallel equals serial across processes: every rank trains its stages of
// the pipeline and compares them with the serial model it trains itself.
#include <gtest/gtest.h>
#include <torch/torch.h>

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

}  // namespace
}  // namespace strata::pipeline::testing

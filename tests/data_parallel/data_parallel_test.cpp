// Data parallel equals serial: R replicas on shards of the global batch end
// with the losses and parameters of one process on the whole batch.
#include "strata/data_parallel/data_parallel.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "strata/error.h"
#include "strata/runtime/world.h"
#include "training_fixture.h"

namespace strata::data_parallel {
namespace {

using namespace testing;
using strata::testing::RankContext;
using strata::testing::runInProcesses;

constexpr double kTolerance = 1e-5;
constexpr uint64_t kSerialSeed = 1000;

struct Scenario {
  const char* name;
  BucketSizes buckets;
  int microBatches = 1;
  int expectedBuckets = 0;
};

const BucketSizes kOneBucketPerParam{1, 1};
const BucketSizes kOneBigBucket{};  // 25 MB: the whole model

// Trains with replicas initialised differently (so the broadcast matters),
// each on its shard, `microBatches` backward passes per step.
TrainResult trainDataParallel(Communicator& comm, const Dataset& data,
                              const OptimizerFactory& makeOptimizer, DataParallelOptions options,
                              int microBatches, const Scenario* expect = nullptr) {
  Mlp model(kSerialSeed + comm.rank(), false);
  DataParallel dp(model, comm, options);
  if (expect) {
    EXPECT_EQ(static_cast<int>(dp.layout().buckets().size()), expect->expectedBuckets)
        << expect->name;
  }
  auto optimizer = makeOptimizer(model.parameters());
  TrainResult result;
  for (int step = 0; step < kSteps; ++step) {
    optimizer->zero_grad();  // LibTorch's own: detach_() and zero_() on each .grad
    std::vector<torch::Tensor> x =
        shardOf(data.inputs[step], comm.rank(), comm.size()).chunk(microBatches);
    std::vector<torch::Tensor> y =
        shardOf(data.targets[step], comm.rank(), comm.size()).chunk(microBatches);
    double localLoss = 0;
    for (int m = 0; m < microBatches; ++m) {
      torch::Tensor loss = torch::mse_loss(model.forward(x[m]), y[m]) / microBatches;
      if (m + 1 < microBatches) {
        auto guard = dp.noSync();
        loss.backward();
        EXPECT_EQ(dp.startedBuckets(), 0) << "no communication inside noSync()";
      } else {
        loss.backward();
        // Every parameter got its gradient, so every bucket started in backward.
        EXPECT_EQ(dp.startedBuckets(), static_cast<int>(dp.layout().buckets().size()));
      }
      localLoss += loss.item<double>();
    }
    dp.finishGradientSync();
    optimizer->step();
    torch::Tensor globalLoss = torch::tensor({localLoss}, torch::kDouble);
    comm.allReduce(globalLoss, ReduceOp::kAvg);
    result.losses.push_back(globalLoss.item<double>());
  }
  result.params = snapshot(model);
  return result;
}

void expectSameTraining(const TrainResult& serial, const TrainResult& parallel,
                        const std::string& what) {
  ASSERT_EQ(serial.losses.size(), parallel.losses.size()) << what;
  for (size_t s = 0; s < serial.losses.size(); ++s) {
    EXPECT_NEAR(serial.losses[s], parallel.losses[s], kTolerance) << what << " step " << s;
  }
  EXPECT_LE(maxDifference(serial.params, parallel.params), kTolerance) << what;
}

std::vector<Scenario> scenarios() {
  return {{"one big bucket", kOneBigBucket, 1, 1},
          {"one bucket per parameter", kOneBucketPerParam, 1, 6},
          {"buckets of ~1 KiB", {256, 1024}, 1, 3},
          {"accumulation, one big bucket", kOneBigBucket, 2, 1},
          {"accumulation, one bucket per parameter", kOneBucketPerParam, 2, 6}};
}

void checkMatchesSerial(const RankContext& ctx) {
  auto world = World::init();
  Dataset data = makeDataset();
  for (const auto& [optimizerName, makeOptimizer] :
       {std::pair{"AdamW", adamW()}, std::pair{"SGD momentum", sgdMomentum()}}) {
    Mlp serialModel(kSerialSeed, false);
    TrainResult serial = trainSerial(serialModel, data, makeOptimizer);
    for (const Scenario& scenario : scenarios()) {
      DataParallelOptions options;
      options.buckets = scenario.buckets;
      TrainResult parallel = trainDataParallel(world->comm(), data, makeOptimizer, options,
                                               scenario.microBatches, &scenario);
      expectSameTraining(serial, parallel, std::string(optimizerName) + ", " + scenario.name);
    }
  }
}

TEST(DataParallel, TwoReplicasMatchSerial) { runInProcesses(2, checkMatchesSerial); }
TEST(DataParallel, FourReplicasMatchSerial) { runInProcesses(4, checkMatchesSerial); }

// pp 1 x dp 2 x tp 2: ranks {0, 2} and {1, 3} are two independent dp groups
// on different data; each must match its own serial run and ignore the other.
TEST(DataParallel, AveragesOverTheDpGroupOfALayoutOnly) {
  runInProcesses(4, [](const RankContext& ctx) {
    auto world = World::init();
    ParallelGroups groups = world->parallelGroups(ParallelLayout(4, {1, 2, 1, 2}));
    Dataset data = makeDataset(100 + groups.coord.tp);
    Mlp serialModel(kSerialSeed, false);
    TrainResult serial = trainSerial(serialModel, data, adamW());
    TrainResult parallel = trainDataParallel(*groups.dp, data, adamW(), {}, 1);
    expectSameTraining(serial, parallel, "dp group " + groups.dp->name());
  });
}

TEST(DataParallel, ModuleZeroGradAndSetToNoneKeepWorking) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    Dataset data = makeDataset();
    Mlp serialModel(kSerialSeed, false);
    TrainResult serial = trainSerial(serialModel, data, sgdMomentum());
    Mlp model(kSerialSeed + ctx.rank, false);
    DataParallel dp(model, world->comm());
    auto optimizer = sgdMomentum()(model.parameters());
    for (int step = 0; step < kSteps; ++step) {
      model.zero_grad(/*set_to_none=*/step % 2 == 1);
      torch::Tensor x = shardOf(data.inputs[step], ctx.rank, 2);
      torch::Tensor y = shardOf(data.targets[step], ctx.rank, 2);
      torch::mse_loss(model.forward(x), y).backward();
      dp.finishGradientSync();
      optimizer->step();
    }
    EXPECT_LE(maxDifference(serial.params, snapshot(model)), kTolerance);
  });
}

}  // namespace
}  // namespace strata::data_parallel

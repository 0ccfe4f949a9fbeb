// ZeRO-1 and ZeRO-2 train exactly like plain data parallelism (and so like one
// process), while each rank holds only its share of the optimizer state.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "strata/data_parallel/zero_optimizer.h"
#include "strata/runtime/world.h"
#include "training_fixture.h"

namespace strata::data_parallel {
namespace {

using namespace testing;
using strata::testing::RankContext;
using strata::testing::runInProcesses;

constexpr double kZeroTolerance = 1e-5;

struct ZeroRun {
  std::vector<torch::Tensor> params;
  int64_t stateBytes = 0;
};

ZeroRun trainZero(Communicator& comm, const Dataset& data, GradientReduction reduction,
                  BucketSizes buckets, std::unique_ptr<FlatOptimizer> optimizer) {
  Mlp model(1000 + comm.rank(), false);
  DataParallelOptions options;
  options.reduction = reduction;
  options.buckets = buckets;
  DataParallel dp(model, comm, options);
  ZeroOptimizer zero(dp, std::move(optimizer));
  EXPECT_EQ(zero.stage(), reduction == GradientReduction::kAllReduce ? 1 : 2);
  for (int step = 0; step < kSteps; ++step) {
    zero.zeroGrad();
    torch::Tensor x = shardOf(data.inputs[step], comm.rank(), comm.size());
    torch::Tensor y = shardOf(data.targets[step], comm.rank(), comm.size());
    torch::mse_loss(model.forward(x), y).backward();
    zero.step();
  }
  return {snapshot(model), zero.stateBytes()};
}

// Plain data parallelism with LibTorch's own optimizer: the reference.
std::vector<torch::Tensor> trainPlain(Communicator& comm, const Dataset& data,
                                      const OptimizerFactory& makeOptimizer) {
  Mlp model(1000 + comm.rank(), false);
  DataParallel dp(model, comm);
  auto optimizer = makeOptimizer(model.parameters());
  for (int step = 0; step < kSteps; ++step) {
    dp.zeroGrad();
    torch::Tensor x = shardOf(data.inputs[step], comm.rank(), comm.size());
    torch::Tensor y = shardOf(data.targets[step], comm.rank(), comm.size());
    torch::mse_loss(model.forward(x), y).backward();
    dp.finishGradientSync();
    optimizer->step();
  }
  return snapshot(model);
}

int64_t parameterCount() {
  int64_t count = 0;
  for (const torch::Tensor& p : Mlp(0, false).parameters()) count += p.numel();
  return count;
}

void checkZeroMatchesPlain(const RankContext& ctx) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Dataset data = makeDataset();
  std::vector<torch::Tensor> plainAdamW = trainPlain(comm, data, adamW());
  std::vector<torch::Tensor> plainSgd = trainPlain(comm, data, sgdMomentum());
  Mlp serialModel(1000, false);
  EXPECT_LE(maxDifference(plainAdamW, trainSerial(serialModel, data, adamW()).params),
            kZeroTolerance);

  for (GradientReduction reduction :
       {GradientReduction::kAllReduce, GradientReduction::kReduceScatter}) {
    std::string stage = reduction == GradientReduction::kAllReduce ? "ZeRO-1" : "ZeRO-2";
    for (BucketSizes buckets : {BucketSizes{}, BucketSizes{1, 1}, BucketSizes{256, 1024}}) {
      std::string what = stage + ", bucket bytes " + std::to_string(buckets.bucketBytes);
      ZeroRun adam = trainZero(comm, data, reduction, buckets, flatAdamW());
      EXPECT_LE(maxDifference(plainAdamW, adam.params), kZeroTolerance) << what << ", AdamW";
      ZeroRun sgd = trainZero(comm, data, reduction, buckets, flatSgdMomentum());
      EXPECT_LE(maxDifference(plainSgd, sgd.params), kZeroTolerance) << what << ", SGD";

      // Two float moments per element, split R ways; each bucket pads to a
      // multiple of R, which stays well under one parameter (the 3-element bias).
      int64_t unsharded = 2 * 4 * parameterCount();
      EXPECT_NEAR(adam.stateBytes, unsharded / comm.size(), 2 * 4 * 3) << what;
      EXPECT_NEAR(sgd.stateBytes, unsharded / 2 / comm.size(), 4 * 3) << what;
    }
  }
}

TEST(Zero, TwoReplicasMatchPlainDataParallel) { runInProcesses(2, checkZeroMatchesPlain); }
TEST(Zero, FourReplicasMatchPlainDataParallel) { runInProcesses(4, checkZeroMatchesPlain); }

}  // namespace
}  // namespace strata::data_parallel

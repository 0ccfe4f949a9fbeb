// The documented behaviour for parameters without gradient, and the errors a
// misuse gets, decided alike on every rank.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/error.h"
#include "strata/runtime/world.h"
#include "training_fixture.h"

namespace strata::data_parallel {
namespace {

using namespace testing;
using strata::testing::RankContext;
using strata::testing::runInProcesses;

// Runs `body`, expecting it to throw E whose message contains every needle.
template <typename E>
void expectThrowMentioning(const std::function<void()>& body,
                           const std::vector<std::string>& needles) {
  try {
    body();
    ADD_FAILURE() << "expected an exception mentioning " << needles[0];
  } catch (const E& error) {
    for (const std::string& needle : needles) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
          << "'" << needle << "' missing from: " << error.what();
    }
  }
}

void backwardOnShard(Mlp& model, const Dataset& data, int step, int rank, int replicas) {
  torch::Tensor x = shardOf(data.inputs[step], rank, replicas);
  torch::Tensor y = shardOf(data.targets[step], rank, replicas);
  torch::mse_loss(model.forward(x), y).backward();
}

TEST(DataParallelUnused, ByDefaultFinishNamesTheUnusedParameters) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    Dataset data = makeDataset();
    Mlp model(1, /*withUnused=*/true);
    DataParallel dp(model, world->comm());
    backwardOnShard(model, data, 0, ctx.rank, 2);
    expectThrowMentioning<Error>(
        [&] { dp.finishGradientSync(); },
        {"2 of 8 parameters", "'unused.weight'", "'unused.bias'", "kTreatAsZero"});
  });
}

// Nobody uses `unused`: its .grad stays undefined, the optimizer skips it as in
// one-process training, and everything else trains exactly like serial.
TEST(DataParallelUnused, TreatAsZeroMatchesSerialAndLeavesGradUndefined) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    Dataset data = makeDataset();
    Mlp serialModel(1, true);
    TrainResult serial = trainSerial(serialModel, data, adamW());
    Mlp model(1 + ctx.rank, true);
    DataParallelOptions options;
    options.unusedParameters = UnusedParameters::kTreatAsZero;
    options.buckets = {1, 1};
    DataParallel dp(model, world->comm(), options);
    auto optimizer = adamW()(model.parameters());
    for (int step = 0; step < kSteps; ++step) {
      dp.zeroGrad();
      backwardOnShard(model, data, step, ctx.rank, 2);
      dp.finishGradientSync();
      EXPECT_FALSE(model.unused->weight.grad().defined());
      EXPECT_TRUE(model.last->weight.grad().defined());
      optimizer->step();
    }
    EXPECT_LE(maxDifference(serial.params, snapshot(model)), 1e-5);
  });
}

// Rank 0 uses `unused` (adding it to the output), rank 1 does not: the
// average is rank 0's gradient over the replica count.
TEST(DataParallelUnused, TreatAsZeroAveragesAPartlyUsedParameter) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    Mlp model(1, true);
    DataParallelOptions options;
    options.unusedParameters = UnusedParameters::kTreatAsZero;
    DataParallel dp(model, world->comm(), options);
    torch::Tensor x = torch::ones({2, 16});
    Mlp reference(1, true);  // what rank 0 computes, replayed without data parallelism
    reference.unused->forward(x).sum().backward();
    torch::Tensor expected = reference.unused->weight.grad() / 2;
    if (ctx.rank == 0) {
      model.unused->forward(x).sum().backward();
    } else {
      model.last->forward(x).sum().backward();
    }
    dp.finishGradientSync();
    EXPECT_TRUE(torch::allclose(model.unused->weight.grad(), expected));
  });
}

TEST(DataParallelErrors, CheckEqualNamesTheFirstDifferingParameter) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    DataParallelOptions options;
    options.initialSync = InitialSync::kCheckEqual;
    Mlp same(5, false);
    DataParallel ok(same, world->comm(), options);
    Mlp different(5 + ctx.rank, false);
    expectThrowMentioning<ConfigError>([&] { DataParallel dp(different, world->comm(), options); },
                                       {"'first.weight'", "differ"});
  });
}

TEST(DataParallelErrors, DifferentModelsOnTheReplicasAreAConfigError) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    Mlp model(1, /*withUnused=*/ctx.rank == 0);
    expectThrowMentioning<ConfigError>([&] { DataParallel dp(model, world->comm()); },
                                       {"different numbers of tensors", "between 6 and 8"});
  });
}

TEST(DataParallelErrors, BadOptionsAndMisuseAreReported) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    Mlp model(1, false);
    DataParallelOptions bad;
    bad.buckets.bucketBytes = 0;
    expectThrowMentioning<ConfigError>([&] { DataParallel dp(model, world->comm(), bad); },
                                       {"bucketBytes 0"});
    Dataset data = makeDataset();
    DataParallel dp(model, world->comm());
    backwardOnShard(model, data, 0, ctx.rank, 2);
    expectThrowMentioning<Error>([&] { backwardOnShard(model, data, 1, ctx.rank, 2); },
                                 {"second gradient", "noSync()"});
    dp.finishGradientSync();
    auto guard = dp.noSync();
    expectThrowMentioning<Error>([&] { dp.finishGradientSync(); }, {"noSync()"});
  });
}

}  // namespace
}  // namespace strata::data_parallel

// The in-place all-reduce of collective buffers (members arrive without
// waiting; pieces go to whoever is free): many ops in flight at once, more
// than the ring has slots, waited in any order, with and without the worker
// threads helping, against Gloo on the same data; peers that exit or stall
// are named.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "multiprocess.h"
#include "peer_failure_checks.h"
#include "shm_and_gloo_groups.h"
#include "strata/error.h"
#include "strata/runtime/world.h"

namespace strata {
namespace {

using testing::RankContext;

// More ops than the ring's 32 slots, each spanning two 64 KiB pieces, so
// slots are reused while earlier ops are still unwaited.
constexpr int kOps = 70;
constexpr int64_t kOpNumel = 20011;

void manyInFlightMatchGloo(const RankContext& ctx, const char* helper) {
  setenv("STRATA_SHM_HELPER", helper, 1);
  auto world = World::init();
  auto [shm, gloo] = testing::shmAndGlooGroups(*world, ctx.worldSize, "claimed");
  torch::Tensor buffer = shm->allocateCollectiveBuffer(kOps * kOpNumel, {});
  torch::manual_seed(300 + ctx.rank);
  for (int round = 0; round < 3; ++round) {
    buffer.copy_(torch::randn({kOps * kOpNumel}));
    torch::Tensor expected = buffer.clone();
    std::vector<WorkHandle> works;
    for (int i = 0; i < kOps; ++i) {
      torch::Tensor view = buffer.narrow(0, i * kOpNumel, kOpNumel);
      works.push_back(shm->allReduceAsync(view, i % 2 ? ReduceOp::kAvg : ReduceOp::kSum));
    }
    for (int i = kOps - 1; i >= 0; --i) works[i]->wait();
    for (int i = 0; i < kOps; ++i) {
      torch::Tensor view = expected.narrow(0, i * kOpNumel, kOpNumel);
      gloo->allReduce(view, i % 2 ? ReduceOp::kAvg : ReduceOp::kSum);
    }
    EXPECT_TRUE(torch::allclose(buffer, expected, 1e-5, 1e-6))
        << "round " << round << " with STRATA_SHM_HELPER=" << helper;
  }
}

TEST(ClaimedAllReduce, ManyInFlightWithHelpingWorkersMatchGloo) {
  testing::runInProcesses(2, [](const RankContext& ctx) { manyInFlightMatchGloo(ctx, "always"); });
  testing::runInProcesses(3, [](const RankContext& ctx) { manyInFlightMatchGloo(ctx, "always"); });
}

TEST(ClaimedAllReduce, ManyInFlightReducedByWaitersOnlyMatchGloo) {
  testing::runInProcesses(3, [](const RankContext& ctx) { manyInFlightMatchGloo(ctx, "never"); });
}

// In-place all-reduces interleaved with staged all-reduces and all-gathers of
// ordinary tensors (as tensor-parallel traffic mixes with data-parallel
// buckets), in a random order that every rank draws alike, waited in batches.
void mixedWithStagedMatchGloo(const RankContext& ctx) {
  setenv("STRATA_SHM_HELPER", "always", 1);
  auto world = World::init();
  auto [shm, gloo] = testing::shmAndGlooGroups(*world, ctx.worldSize, "mixed");
  constexpr int kBatch = 12;
  torch::Tensor buffer = shm->allocateCollectiveBuffer(kBatch * kOpNumel, {});
  for (int round = 0; round < 4; ++round) {
    torch::manual_seed(500 + round);  // the same op sequence on every rank
    torch::Tensor kinds = torch::randint(0, 3, {kBatch}, torch::kLong);
    torch::manual_seed(600 + round * 10 + ctx.rank);  // each rank's own data
    buffer.copy_(torch::randn({kBatch * kOpNumel}));
    torch::Tensor expectedBuffer = buffer.clone();
    std::vector<torch::Tensor> ordinary, expected;
    std::vector<WorkHandle> works;
    for (int i = 0; i < kBatch; ++i) {
      int64_t kind = kinds[i].item<int64_t>();
      if (kind == 0) {
        torch::Tensor view = buffer.narrow(0, i * kOpNumel, kOpNumel);
        works.push_back(shm->allReduceAsync(view, ReduceOp::kSum));
        torch::Tensor reference = expectedBuffer.narrow(0, i * kOpNumel, kOpNumel);
        gloo->allReduce(reference, ReduceOp::kSum);
      } else if (kind == 1) {
        ordinary.push_back(torch::randn({1000 + i}));
        expected.push_back(ordinary.back().clone());
        works.push_back(shm->allReduceAsync(ordinary.back(), ReduceOp::kMax));
        gloo->allReduce(expected.back(), ReduceOp::kMax);
      } else {
        torch::Tensor mine = torch::randn({7, 3});
        ordinary.push_back(torch::empty({7 * ctx.worldSize, 3}));
        expected.push_back(torch::empty({7 * ctx.worldSize, 3}));
        works.push_back(shm->allGatherAsync(ordinary.back(), mine));
        gloo->allGather(expected.back(), mine);
      }
    }
    for (WorkHandle& work : works) work->wait();
    EXPECT_TRUE(torch::allclose(buffer, expectedBuffer, 1e-5, 1e-6)) << "round " << round;
    for (size_t j = 0; j < ordinary.size(); ++j) {
      EXPECT_TRUE(torch::allclose(ordinary[j], expected[j], 1e-5, 1e-6))
          << "round " << round << ", ordinary op " << j;
    }
  }
}

TEST(ClaimedAllReduce, MixedWithStagedOpsMatchGloo) {
  testing::runInProcesses(3, mixedWithStagedMatchGloo);
}

torch::Tensor smallBuffer(Communicator& comm) { return comm.allocateCollectiveBuffer(1000, {}); }

TEST(ClaimedAllReduce, PeerThatExitsBeforeArrivingIsNamedWithinASecond) {
  testing::expectExitedPeerNamed(smallBuffer, "group rank 1 exited");
}

TEST(ClaimedAllReduce, StalledPeerTimesOutNamingIt) {
  testing::expectStalledPeerTimesOut(smallBuffer);
}

}  // namespace
}  // namespace strata

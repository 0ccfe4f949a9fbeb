// The in-place all-reduce of collective buffers (members arrive without
// waiting; pieces go to whoever is free): many ops in flight at once, more
// than the ring has slots, waited in any order, with and without the worker
// threads helping, against Gloo on the same data; peers that exit or stall
// are named.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "multiprocess.h"
#include "strata/runtime/error.h"
#include "strata/runtime/world.h"

namespace strata {
namespace {

using testing::RankContext;

std::vector<int> everyone(int worldSize) {
  std::vector<int> ranks(worldSize);
  for (int r = 0; r < worldSize; ++r) ranks[r] = r;
  return ranks;
}

// More ops than the ring's 8 slots, each spanning a few 64 KiB pieces, so
// slots are reused while earlier ops are still unwaited.
constexpr int kOps = 21;
constexpr int64_t kOpNumel = 40009;

void manyInFlightMatchGloo(const RankContext& ctx, const char* helper) {
  setenv("STRATA_SHM_HELPER", helper, 1);
  auto world = World::init();
  std::shared_ptr<Communicator> shm = world->newGroup("claimed", everyone(ctx.worldSize));
  setenv("STRATA_SHM", "0", 1);
  std::shared_ptr<Communicator> gloo = world->newGroup("reference", everyone(ctx.worldSize));
  ASSERT_STREQ(shm->backend(), "gloo+shm");
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

TEST(ClaimedAllReduce, PeerThatExitsBeforeArrivingIsNamedWithinASecond) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 60;
  testing::runInProcesses(
      2,
      [](const RankContext& ctx) {
        auto world = World::init();
        torch::Tensor buffer = world->comm().allocateCollectiveBuffer(1000, {});
        world->comm().allReduce(buffer);
        if (ctx.rank == 1) std::_Exit(0);
        auto start = std::chrono::steady_clock::now();
        try {
          world->comm().allReduce(buffer);
          ADD_FAILURE() << "all_reduce returned although the peer exited";
        } catch (const PeerError& e) {
          std::string message = e.what();
          EXPECT_NE(message.find("all_reduce on group world"), std::string::npos) << message;
          EXPECT_NE(message.find("group rank 1 exited"), std::string::npos) << message;
        }
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
      },
      options);
}

TEST(ClaimedAllReduce, StalledPeerTimesOutNamingIt) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 2;
  testing::runInProcesses(
      2,
      [](const RankContext& ctx) {
        auto world = World::init();
        torch::Tensor buffer = world->comm().allocateCollectiveBuffer(1000, {});
        world->comm().allReduce(buffer);
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::seconds(4));
          std::_Exit(0);
        }
        try {
          world->comm().allReduce(buffer);
          ADD_FAILURE() << "all_reduce returned although the peer stalled";
        } catch (const TimeoutError& e) {
          std::string message = e.what();
          EXPECT_NE(message.find("timed out after 2 s waiting for group ranks 1"),
                    std::string::npos)
              << message;
        }
      },
      options);
}

}  // namespace
}  // namespace strata

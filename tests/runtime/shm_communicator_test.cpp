// The shared-memory transport against Gloo on the same data, and its failure
// modes: a peer that exits, a peer that stalls.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <thread>

#include "multiprocess.h"
#include "strata/runtime/error.h"
#include "strata/runtime/world.h"

namespace strata {
namespace {

using testing::RankContext;

// Element counts around the 1 MiB staging slot (262144 float32 values): one
// value, a small tensor, one element past a slot, several slots and a tail.
const int64_t kSizes[] = {1, 1000, 262145, 700001};

torch::Tensor rankData(int rank, int64_t numel, torch::ScalarType dtype) {
  torch::manual_seed(100 + rank);
  if (dtype == torch::kLong) return torch::randint(-1000, 1000, {numel}, torch::kLong);
  return torch::randn({numel}, torch::TensorOptions(dtype));
}

void expectSame(const torch::Tensor& shm, const torch::Tensor& gloo, const std::string& what) {
  if (shm.is_floating_point()) {
    EXPECT_TRUE(torch::allclose(shm, gloo, 1e-5, 1e-6)) << what;
  } else {
    EXPECT_TRUE(torch::equal(shm, gloo)) << what;
  }
}

void compareAllReduce(Communicator& shm, Communicator& gloo, int rank) {
  for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble, torch::kLong}) {
    for (int64_t numel : kSizes) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) {
        if (op == ReduceOp::kAvg && dtype == torch::kLong) continue;
        torch::Tensor a = rankData(rank, numel, dtype), b = a.clone();
        shm.allReduce(a, op);
        gloo.allReduce(b, op);
        expectSame(a, b,
                   "all_reduce op " + std::to_string(static_cast<int>(op)) + " numel " +
                       std::to_string(numel) + " dtype " + c10::toString(dtype));
      }
    }
  }
}

void compareGatherAndScatter(Communicator& shm, Communicator& gloo, int rank, int n) {
  for (int64_t numel : kSizes) {
    torch::Tensor mine = rankData(rank, numel, torch::kFloat).view({numel, 1});
    torch::Tensor a = torch::empty({n * numel, 1}), b = torch::empty({n * numel, 1});
    shm.allGather(a, mine);
    gloo.allGather(b, mine);
    EXPECT_TRUE(torch::equal(a, b)) << "all_gather numel " << numel;

    torch::Tensor input = rankData(rank, n * numel, torch::kFloat);
    torch::Tensor c = torch::empty({numel}), d = torch::empty({numel});
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
      shm.reduceScatter(c, input, op);
      gloo.reduceScatter(d, input, op);
      expectSame(c, d, "reduce_scatter numel " + std::to_string(numel));
    }
  }
}

void compareWithGloo(const RankContext& ctx) {
  auto world = World::init();
  std::vector<int> everyone(ctx.worldSize);
  for (int r = 0; r < ctx.worldSize; ++r) everyone[r] = r;
  std::shared_ptr<Communicator> shm = world->newGroup("over-shm", everyone);
  setenv("STRATA_SHM", "0", 1);
  std::shared_ptr<Communicator> gloo = world->newGroup("over-gloo", everyone);
  ASSERT_STREQ(shm->backend(), "gloo+shm");
  ASSERT_STREQ(gloo->backend(), "gloo");
  compareAllReduce(*shm, *gloo, ctx.rank);
  compareGatherAndScatter(*shm, *gloo, ctx.rank, ctx.worldSize);
  // Asynchronous collectives complete in submission order.
  std::vector<torch::Tensor> tensors;
  std::vector<WorkHandle> works;
  for (int i = 0; i < 6; ++i) {
    tensors.push_back(torch::full({300000}, float(ctx.rank + i)));
    works.push_back(shm->allReduceAsync(tensors.back()));
  }
  for (int i = 5; i >= 0; --i) works[i]->wait();
  float rankSum = ctx.worldSize * (ctx.worldSize - 1) / 2.0f;
  for (int i = 0; i < 6; ++i)
    EXPECT_TRUE(torch::equal(tensors[i], torch::full({300000}, rankSum + ctx.worldSize * i)));
}

TEST(SharedMemoryTransport, MatchesGlooOnTwoProcesses) {
  testing::runInProcesses(2, compareWithGloo);
}
TEST(SharedMemoryTransport, MatchesGlooOnThreeProcesses) {
  testing::runInProcesses(3, compareWithGloo);
}

TEST(SharedMemoryTransport, PeerThatExitsIsNamedWithinASecond) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 60;
  testing::runInProcesses(
      2,
      [](const RankContext& ctx) {
        auto world = World::init();
        torch::Tensor t = torch::ones({4});
        world->comm().allReduce(t);
        if (ctx.rank == 1) std::_Exit(0);
        auto start = std::chrono::steady_clock::now();
        try {
          world->comm().allReduce(t);
          ADD_FAILURE() << "all_reduce returned although the peer exited";
        } catch (const PeerError& e) {
          std::string message = e.what();
          EXPECT_NE(message.find("all_reduce on group world"), std::string::npos) << message;
          EXPECT_NE(message.find("group ranks 1 (exited)"), std::string::npos) << message;
        }
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
      },
      options);
}

TEST(SharedMemoryTransport, StalledPeerTimesOutNamingIt) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 2;
  testing::runInProcesses(
      2,
      [](const RankContext& ctx) {
        auto world = World::init();
        torch::Tensor t = torch::ones({4});
        world->comm().allReduce(t);
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::seconds(4));
          std::_Exit(0);
        }
        try {
          world->comm().allReduce(t);
          ADD_FAILURE() << "all_reduce returned although the peer stalled";
        } catch (const TimeoutError& e) {
          std::string message = e.what();
          EXPECT_NE(message.find("timed out after 2 s waiting for group ranks 1"),
                    std::string::npos)
              << message;
        }
        // The group is out of step after a failed collective: later ones
        // fail at once with the same cause.
        EXPECT_THROW(world->comm().allReduce(t), TimeoutError);
      },
      options);
}

}  // namespace
}  // namespace strata

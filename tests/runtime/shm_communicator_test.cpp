// The shared-memory transport against Gloo on the same data, and its failure
// modes: a peer that exits, a peer that stalls.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <thread>

#include "multiprocess.h"
#include "peer_failure_checks.h"
#include "shm_and_gloo_groups.h"
#include "strata/error.h"
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
  auto [shm, gloo] = testing::shmAndGlooGroups(*world, ctx.worldSize, "compare");
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
  testing::expectExitedPeerNamed([](Communicator&) { return torch::ones({4}); },
                                 "group ranks 1 (exited)");
}

TEST(SharedMemoryTransport, StalledPeerTimesOutNamingIt) {
  testing::expectStalledPeerTimesOut([](Communicator&) { return torch::ones({4}); });
}

}  // namespace
}  // namespace strata

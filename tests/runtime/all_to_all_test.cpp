// Communicator::allToAll with split sizes of each rank's own, on the
// shared-memory transport and on plain Gloo: every row arrives at its rank in
// order, empty pieces included, and bad counts are refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "multiprocess.h"
#include "shm_and_gloo_groups.h"
#include "strata/error.h"
#include "strata/runtime/world.h"

namespace strata {
namespace {

using testing::RankContext;

// Rows rank `from` sends rank `to`: uneven, with some pairs empty.
int64_t rowsBetween(int from, int to) { return (from * 3 + to * 2) % 4; }

// Row values that name their sender, receiver and index.
at::Tensor rowsFor(int from, int to, int64_t width) {
  int64_t rows = rowsBetween(from, to);
  at::Tensor index = torch::arange(rows * width, torch::kFloat).view({rows, width});
  return index + 1000.0 * from + 100.0 * to;
}

void checkVariableSplits(Communicator& comm, int64_t width) {
  int n = comm.size(), me = comm.rank();
  std::vector<at::Tensor> outgoing, expected;
  std::vector<int64_t> inputSplits, outputSplits;
  for (int peer = 0; peer < n; ++peer) {
    outgoing.push_back(rowsFor(me, peer, width));
    expected.push_back(rowsFor(peer, me, width));
    inputSplits.push_back(rowsBetween(me, peer));
  }
  at::Tensor counts = torch::tensor(inputSplits, torch::kLong).view({n, 1});
  at::Tensor announced = comm.exchangeCounts(counts, width);
  for (int peer = 0; peer < n; ++peer) {
    outputSplits.push_back(announced[peer][0].item<int64_t>());
    EXPECT_EQ(outputSplits.back(), rowsBetween(peer, me)) << "from " << peer;
  }
  at::Tensor input = torch::cat(outgoing);
  at::Tensor output = torch::full({torch::cat(expected).size(0), width}, -1.0);
  comm.allToAll(output, input, outputSplits, inputSplits);
  EXPECT_TRUE(torch::equal(output, torch::cat(expected))) << comm.name();
}

TEST(AllToAll, UnevenAndEmptyPiecesArriveInRankOrderOnBothTransports) {
  testing::runInProcesses(4, [](const RankContext&) {
    auto world = World::init();
    auto groups = testing::shmAndGlooGroups(*world, 4, "a2a");
    checkVariableSplits(*groups.shm, 3);
    checkVariableSplits(*groups.gloo, 3);
    checkVariableSplits(*groups.shm, 70000);  // pieces past the shared channel's staging
  });
}

TEST(AllToAll, ANegativeCountIsRefusedNamingTheSender) {
  testing::runInProcesses(2, [](const RankContext&) {
    auto world = World::init();
    auto& comm = world->comm();
    at::Tensor counts = torch::ones({2, 2}, torch::kLong);
    if (comm.rank() == 1) counts[0][1] = -5;
    if (comm.rank() == 0) {
      try {
        comm.exchangeCounts(counts, 8);
        ADD_FAILURE() << "a negative count was accepted";
      } catch (const ProtocolError& e) {
        EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("-5"), std::string::npos) << e.what();
      }
    } else {
      comm.exchangeCounts(counts, 8);
    }
  });
}

TEST(AllToAll, CountsPastTheReceiveLimitAreRefusedBeforeAllocating) {
  testing::runInProcesses(2, [](const RankContext&) {
    auto world = World::init();
    auto& comm = world->comm();
    at::Tensor counts = torch::ones({2, 1}, torch::kLong);
    if (comm.rank() == 1) counts[0][0] = int64_t{1} << 40;
    if (comm.rank() == 0) {
      EXPECT_THROW(comm.exchangeCounts(counts, 1024), ProtocolError);
    } else {
      comm.exchangeCounts(counts, 1024);
    }
  });
}

TEST(AllToAll, SplitsThatDoNotCoverTheTensorAreRefusedBeforeAnyMessage) {
  testing::runInProcesses(2, [](const RankContext&) {
    auto world = World::init();
    at::Tensor input = torch::zeros({4, 2}), output = torch::zeros({4, 2});
    EXPECT_THROW(world->comm().allToAll(output, input, {2, 2}, {1, 2}), Error);
    EXPECT_THROW(world->comm().allToAll(output, input, {2, 2}, {2, 2, 0}), Error);
  });
}

}  // namespace
}  // namespace strata

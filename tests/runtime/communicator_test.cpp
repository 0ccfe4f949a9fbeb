#include "strata/runtime/communicator.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <thread>

#include "multiprocess.h"
#include "shm_and_gloo_groups.h"
#include "strata/error.h"
#include "strata/runtime/tensor_header.h"
#include "strata/runtime/world.h"

namespace strata {
namespace {

using testing::RankContext;
using testing::runInProcesses;

// Rank r holds [r+1, r+1, ...] * (1 + column index).
torch::Tensor rankTensor(int rank, int64_t rows = 3, int64_t cols = 4) {
  return (rank + 1) * torch::arange(1, cols + 1, torch::kFloat).repeat({rows, 1});
}

void checkCollectives(const RankContext& ctx) {
  auto world = World::init();
  Communicator& comm = world->comm();
  int n = ctx.worldSize;
  ASSERT_EQ(comm.size(), n);
  ASSERT_EQ(comm.rank(), ctx.rank);
  float rankSum = n * (n + 1) / 2.0f;

  torch::Tensor sum = rankTensor(ctx.rank);
  comm.allReduce(sum);
  EXPECT_TRUE(torch::allclose(sum, rankTensor(0) * rankSum));

  torch::Tensor avg = rankTensor(ctx.rank);
  comm.allReduce(avg, ReduceOp::kAvg);
  EXPECT_TRUE(torch::allclose(avg, rankTensor(0) * rankSum / n));

  torch::Tensor max = rankTensor(ctx.rank);
  comm.allReduce(max, ReduceOp::kMax);
  EXPECT_TRUE(torch::equal(max, rankTensor(n - 1)));

  torch::Tensor fromLast = rankTensor(ctx.rank);
  comm.broadcast(fromLast, n - 1);
  EXPECT_TRUE(torch::equal(fromLast, rankTensor(n - 1)));

  torch::Tensor gathered = torch::zeros({3 * n, 4});
  comm.allGather(gathered, rankTensor(ctx.rank));
  for (int r = 0; r < n; ++r)
    EXPECT_TRUE(torch::equal(gathered.narrow(0, 3 * r, 3), rankTensor(r)));

  // Every rank holds rows [0, 2n); rank r keeps the reduced rows [2r, 2r+2).
  torch::Tensor input = rankTensor(ctx.rank, 2 * n) + torch::arange(2 * n).unsqueeze(1);
  torch::Tensor scattered = torch::empty({2, 4});
  comm.reduceScatter(scattered, input);
  torch::Tensor expected =
      rankSum * rankTensor(0, 2) + n * torch::arange(2 * ctx.rank, 2 * ctx.rank + 2).unsqueeze(1);
  EXPECT_TRUE(torch::allclose(scattered, expected));
  comm.reduceScatter(scattered, input, ReduceOp::kAvg);
  EXPECT_TRUE(torch::allclose(scattered, expected / n));

  comm.barrier();
}

TEST(Communicator, CollectivesOnOneProcess) { checkCollectives(RankContext{0, 1}); }
TEST(Communicator, CollectivesOnTwoProcesses) { runInProcesses(2, checkCollectives); }
TEST(Communicator, CollectivesOnFourProcesses) { runInProcesses(4, checkCollectives); }

void checkPointToPoint(const RankContext& ctx) {
  auto world = World::init();
  Communicator& comm = world->comm();
  int n = ctx.worldSize;
  int next = (ctx.rank + 1) % n;
  int prev = (ctx.rank + n - 1) % n;

  // A ring of known-shape sends, posted asynchronously so nobody deadlocks.
  WorkHandle sent = comm.sendAsync(rankTensor(ctx.rank), next, 7);
  torch::Tensor got = torch::empty({3, 4});
  comm.recv(got, prev, 7);
  sent->wait();
  EXPECT_TRUE(torch::equal(got, rankTensor(prev)));

  // Shapes and dtypes the receiver does not know.
  std::vector<torch::Tensor> outgoing = {
      torch::arange(ctx.rank + 2, torch::kLong),
      torch::ones({1, ctx.rank + 1, 2}, torch::kBFloat16),
      torch::full({}, 3.5 + ctx.rank, torch::kDouble),
      torch::zeros({0, 5}),
  };
  std::vector<WorkHandle> pending;
  for (const auto& t : outgoing) pending.push_back(comm.sendTensorAsync(t, next, 3));
  for (const auto& t : outgoing) {
    torch::Tensor in = comm.recvTensor(prev, 3);
    torch::Tensor want;
    if (t.dim() == 1) want = torch::arange(prev + 2, torch::kLong);
    if (t.dim() == 3) want = torch::ones({1, prev + 1, 2}, torch::kBFloat16);
    if (t.dim() == 0) want = torch::full({}, 3.5 + prev, torch::kDouble);
    if (t.dim() == 2) want = torch::zeros({0, 5});
    EXPECT_EQ(in.scalar_type(), want.scalar_type());
    EXPECT_TRUE(torch::equal(in, want)) << in << want;
  }
  for (auto& w : pending) w->wait();
}

TEST(Communicator, PointToPointOnTwoProcesses) { runInProcesses(2, checkPointToPoint); }
TEST(Communicator, PointToPointOnFourProcesses) { runInProcesses(4, checkPointToPoint); }

// A send says it is done once the receiver has it, without being waited for:
// what lets a pipeline stage drop its hand-offs as they are delivered. Over
// both transports; a large message, so neither copies it when posted.
TEST(Communicator, SendReportsDeliveryBeforeItIsWaitedFor) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    testing::ShmAndGloo groups = testing::shmAndGlooGroups(*world, 2, "delivery");
    for (const auto& comm : {groups.shm, groups.gloo}) {
      torch::Tensor message = torch::arange(16384, torch::kFloat);
      if (ctx.rank == 1) {
        comm->barrier();
        torch::Tensor in = torch::empty_like(message);
        comm->recv(in, 0, 7);
        EXPECT_TRUE(torch::equal(in, message)) << comm->backend();
        continue;
      }
      WorkHandle send = comm->sendAsync(message, 1, 7);
      EXPECT_FALSE(send->isCompleted()) << comm->backend() << ": done before any receive";
      comm->barrier();  // the receive is posted after this
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!send->isCompleted() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_TRUE(send->isCompleted()) << comm->backend() << ": delivered, yet not done";
      send->wait();
    }
  });
}

TEST(Communicator, ParallelGroupsReduceWithinTheirDimension) {
  runInProcesses(4, [](const RankContext& ctx) {
    auto world = World::init();
    ParallelLayout layout(4, {2, 1, 1, 2});
    ParallelGroups groups = world->parallelGroups(layout);
    EXPECT_EQ(groups.tp->name(), "tp[pp=" + std::to_string(ctx.rank / 2) + "]");
    EXPECT_EQ(groups.tp->globalRanks(), layout.groupRanks(Dim::kTensor, ctx.rank));
    torch::Tensor t = torch::full({2}, float(ctx.rank));
    groups.tp->allReduce(t);
    float tpSum = ctx.rank < 2 ? 0 + 1 : 2 + 3;
    EXPECT_TRUE(torch::equal(t, torch::full({2}, tpSum)));
    torch::Tensor p = torch::full({2}, float(ctx.rank));
    groups.pp->allReduce(p);
    float ppSum = ctx.rank % 2 == 0 ? 0 + 2 : 1 + 3;
    EXPECT_TRUE(torch::equal(p, torch::full({2}, ppSum)));
    EXPECT_EQ(groups.dp->size(), 1);
  });
}

TEST(Communicator, MalformedHeadersAreRejectedBeforeAllocating) {
  runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    Communicator& comm = world->comm();
    TensorHeader huge;
    huge.shape = {int64_t{1} << 20, int64_t{1} << 20};  // 2^40 elements
    std::vector<std::vector<int64_t>> bad = {huge.encode(), TensorHeader{}.encode(),
                                             TensorHeader{}.encode()};
    bad[1][2] = 99;  // unknown dtype
    bad[2][3] = 12;  // too many dimensions
    if (ctx.rank == 0) {
      for (auto& words : bad) comm.send(torch::tensor(words, torch::kLong), 1, 0);
    } else {
      for (const char* why : {"limit of", "unknown dtype code 99", "12 dimensions"}) {
        try {
          comm.recvTensor(0, 0);
          ADD_FAILURE() << "accepted a header that should fail with: " << why;
        } catch (const ProtocolError& e) {
          EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
        }
      }
    }
    comm.barrier();
  });
}

TEST(Communicator, StalledPeerTimesOutWithTheOperationNamed) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 2;
  runInProcesses(
      2,
      [](const RankContext& ctx) {
        auto world = World::init();
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::seconds(6));
          return;
        }
        torch::Tensor t = torch::ones({4});
        auto start = std::chrono::steady_clock::now();
        try {
          world->comm().allReduce(t);
          ADD_FAILURE() << "all_reduce returned although the peer never joined";
        } catch (const TimeoutError& e) {
          std::string message = e.what();
          EXPECT_NE(message.find("all_reduce on group world"), std::string::npos) << message;
          EXPECT_NE(message.find("timed out after 2 s"), std::string::npos) << message;
        }
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
      },
      options);
}

TEST(Communicator, ShapeMismatchesAreClearErrors) {
  auto world = World::init(ProcessEnv{}, Timeouts::fromSeconds(5));
  torch::Tensor out = torch::empty({3, 4});
  try {
    world->comm().allGather(out, torch::ones({2, 4}));
    ADD_FAILURE() << "accepted mismatched shapes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all_gather on group world"), std::string::npos);
  }
  EXPECT_THROW(world->comm().send(torch::ones({1}), 3), Error);
}

}  // namespace
}  // namespace strata

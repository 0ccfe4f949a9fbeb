// Collective buffers: all-reduce and reduce-scatter over views of a buffer
// the shared-memory transport reduces in place, against Gloo on the same
// data; members that pass different tensors get a ProtocolError naming both.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "multiprocess.h"
#include "shm_and_gloo_groups.h"
#include "strata/error.h"
#include "strata/runtime/world.h"

namespace strata {
namespace {

using testing::RankContext;

torch::Tensor bufferRankData(int rank, int64_t numel, torch::ScalarType dtype) {
  torch::manual_seed(200 + rank);
  if (dtype == torch::kLong) return torch::randint(-1000, 1000, {numel}, torch::kLong);
  return torch::randn({numel}, torch::TensorOptions(dtype));
}

// Views at the buffer's start, inside it and at its end, small and spanning
// many of the reduction's pieces.
struct Window {
  int64_t offset, numel;
};
const Window kWindows[] = {{0, 1}, {5, 1000}, {37, 262145}, {0, 700001}, {699000, 1001}};
constexpr int64_t kBufferNumel = 700001;

void compareAllReduce(Communicator& shm, Communicator& gloo, int rank, torch::ScalarType dtype) {
  torch::Tensor buffer = shm.allocateCollectiveBuffer(kBufferNumel, torch::TensorOptions(dtype));
  ASSERT_EQ(buffer.numel(), kBufferNumel);
  EXPECT_TRUE(torch::equal(buffer, torch::zeros_like(buffer))) << "a fresh buffer is zeroed";
  for (const Window& w : kWindows) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) {
      if (op == ReduceOp::kAvg && dtype == torch::kLong) continue;
      torch::Tensor before = bufferRankData(rank, kBufferNumel, dtype);
      buffer.copy_(before);
      torch::Tensor view = buffer.narrow(0, w.offset, w.numel);
      torch::Tensor expected = view.clone();
      shm.allReduce(view, op);
      gloo.allReduce(expected, op);
      std::string what = "window at " + std::to_string(w.offset) + " of " +
                         std::to_string(w.numel) + ", op " + std::to_string(int(op)) + ", " +
                         c10::toString(dtype);
      if (dtype == torch::kLong) {
        EXPECT_TRUE(torch::equal(view, expected)) << what;
      } else {
        EXPECT_TRUE(torch::allclose(view, expected, 1e-5, 1e-6)) << what;
      }
      torch::Tensor outside = torch::ones({kBufferNumel}, torch::kBool);
      outside.narrow(0, w.offset, w.numel).fill_(false);
      EXPECT_TRUE(torch::equal(buffer.masked_select(outside), before.masked_select(outside)))
          << what << ": elements outside the view changed";
    }
  }
}

void compareReduceScatter(Communicator& shm, Communicator& gloo, int rank, int n) {
  const int64_t k = 100003;
  torch::Tensor buffer = shm.allocateCollectiveBuffer(n * k + 7, {});
  torch::Tensor input = buffer.narrow(0, 7, n * k);
  input.copy_(bufferRankData(rank, n * k, torch::kFloat));
  torch::Tensor copy = input.clone();
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
    torch::Tensor out = torch::empty({k}), expected = torch::empty({k});
    shm.reduceScatter(out, input, op);
    gloo.reduceScatter(expected, copy, op);
    EXPECT_TRUE(torch::allclose(out, expected, 1e-5, 1e-6)) << "reduce_scatter op " << int(op);
    EXPECT_TRUE(torch::equal(input, copy)) << "reduce_scatter changed its input";
  }
}

void compareBufferWithGloo(const RankContext& ctx) {
  auto world = World::init();
  auto [shm, gloo] = testing::shmAndGlooGroups(*world, ctx.worldSize, "compare");
  for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble, torch::kLong})
    compareAllReduce(*shm, *gloo, ctx.rank, dtype);
  compareReduceScatter(*shm, *gloo, ctx.rank, ctx.worldSize);
  // Without shared memory the buffer is ordinary memory, and still works.
  torch::Tensor plain = gloo->allocateCollectiveBuffer(10, {});
  EXPECT_TRUE(torch::equal(plain, torch::zeros({10})));
  plain.fill_(1);
  gloo->allReduce(plain);
  EXPECT_TRUE(torch::equal(plain, torch::full({10}, float(ctx.worldSize))));
}

TEST(CollectiveBuffer, InPlaceReductionsMatchGlooOnTwoProcesses) {
  testing::runInProcesses(2, compareBufferWithGloo);
}
TEST(CollectiveBuffer, InPlaceReductionsMatchGlooOnThreeProcesses) {
  testing::runInProcesses(3, compareBufferWithGloo);
}

// Runs `call` on a fresh shared-memory group and expects ProtocolError whose
// message holds every one of `parts`.
void expectDisagreement(World& world, int worldSize, const std::string& name,
                        const std::function<void(Communicator&)>& call,
                        const std::vector<std::string>& parts) {
  std::shared_ptr<Communicator> group = world.newGroup(name, testing::allRanks(worldSize));
  try {
    call(*group);
    ADD_FAILURE() << name << ": the collective returned although the members disagreed";
  } catch (const ProtocolError& e) {
    std::string message = e.what();
    for (const std::string& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << name << ": " << message;
  }
}

TEST(CollectiveBuffer, MembersPassingDifferentTensorsGetAProtocolErrorNamingBoth) {
  testing::runInProcesses(2, [](const RankContext& ctx) {
    auto world = World::init();
    expectDisagreement(
        *world, ctx.worldSize, "views",
        [&](Communicator& group) {
          torch::Tensor buffer = group.allocateCollectiveBuffer(1000, {});
          torch::Tensor view = buffer.narrow(0, 0, ctx.rank == 0 ? 100 : 101);
          group.allReduce(view);
        },
        {"all_reduce on group views",
         "group rank 0 passed all_reduce in a collective buffer of "
         "100 Float elements (sum), buffer 1 at byte 0",
         "group rank 1 passed all_reduce in a collective buffer of 101 Float elements"});
    expectDisagreement(
        *world, ctx.worldSize, "mixed",
        [&](Communicator& group) {
          torch::Tensor buffer = group.allocateCollectiveBuffer(1000, {});
          torch::Tensor t = ctx.rank == 0 ? buffer : torch::zeros({1000});
          group.allReduce(t, ReduceOp::kAvg);
        },
        {"group rank 0 passed all_reduce in a collective buffer of 1000 Float elements (avg)",
         "group rank 1 passed all_reduce of 1000 Float elements (avg)"});
    expectDisagreement(*world, ctx.worldSize, "staged",
                       [&](Communicator& group) {
                         torch::Tensor t = torch::zeros({ctx.rank == 0 ? 10 : 12});
                         group.allReduce(t, ctx.rank == 0 ? ReduceOp::kSum : ReduceOp::kMax);
                       },
                       {"group rank 0 passed all_reduce of 10 Float elements (sum)",
                        "group rank 1 passed all_reduce of 12 Float elements (max)"});
  });
}

}  // namespace
}  // namespace strata

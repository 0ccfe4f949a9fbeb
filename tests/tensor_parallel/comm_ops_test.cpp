// Each communication function, forward and backward, against serial: every
// chain below computes the identity (or an elementwise function) serially,
// so parallel = serial checks the forward and that each backward is the
// adjoint of its forward under the region conventions of comm_ops.h.
#include "strata/tensor_parallel/comm_ops.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "tp_test_support.h"

namespace strata::tensor_parallel {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;
using namespace strata::tensor_parallel::testing;

// x with every column outside this rank's 1/p of the last dimension zeroed:
// the partial results whose sum over ranks is x.
at::Tensor ownColumnsOnly(const at::Tensor& x, const Communicator& tp) {
  int64_t width = x.size(-1) / tp.size();
  at::Tensor mask = at::zeros({x.size(-1)});
  mask.narrow(0, width * tp.rank(), width).fill_(1.0);
  return x * mask;
}

// This rank's 1/p of the last dimension, without communication.
at::Tensor ownColumns(const at::Tensor& x, const Communicator& tp) {
  int64_t width = x.size(-1) / tp.size();
  return x.narrow(-1, width * tp.rank(), width);
}

LayerCase chain(std::string name, Sharding in, Sharding out,
                std::function<at::Tensor(const at::Tensor&, Communicator&)> body) {
  LayerCase layer;
  layer.name = std::move(name);
  layer.build = [](std::shared_ptr<Communicator>) { return std::make_shared<torch::nn::Module>(); };
  layer.run = [body](torch::nn::Module&, const at::Tensor& x, Communicator& tp) {
    return body(x, tp);
  };
  layer.input = seededData({8, 2, 12}, 7);
  layer.inputSharding = in;
  layer.outputSharding = out;
  return layer;
}

void checkEveryOp(const RankContext&) {
  TestGroups groups = joinTestGroups();
  using S = Sharding;
  std::vector<LayerCase> chains = {
      chain("copy", S::kReplicated, S::kLastDim,
            [](const at::Tensor& x, Communicator& tp) {
              return ownColumns(copyToTensorRegion(x, tp), tp);
            }),
      chain("copy then reduce", S::kReplicated, S::kReplicated,
            [](const at::Tensor& x, Communicator& tp) {
              return reduceFromTensorRegion(ownColumnsOnly(copyToTensorRegion(x, tp), tp), tp);
            }),
      chain("scatter then gather (last dim)", S::kReplicated, S::kReplicated,
            [](const at::Tensor& x, Communicator& tp) {
              return gatherFromTensorRegion(scatterToTensorRegion(x, tp).square(), tp);
            }),
      chain("gather (last dim)", S::kLastDim, S::kReplicated,
            [](const at::Tensor& x, Communicator& tp) {
              return gatherFromTensorRegion(x.sin(), tp);
            }),
      chain("scatter then gather (sequence)", S::kReplicated, S::kLastDim,
            [](const at::Tensor& x, Communicator& tp) {
              at::Tensor rows = scatterToSequenceRegion(x, tp).square();
              return ownColumns(gatherFromSequenceRegion(rows, tp), tp);
            }),
      chain("gather (sequence)", S::kSequence, S::kLastDim,
            [](const at::Tensor& x, Communicator& tp) {
              return ownColumns(gatherFromSequenceRegion(x, tp), tp);
            }),
      chain("reduce-scatter (sequence)", S::kReplicated, S::kSequence,
            [](const at::Tensor& x, Communicator& tp) {
              at::Tensor partial = ownColumnsOnly(copyToTensorRegion(x, tp), tp);
              return reduceScatterToSequenceRegion(partial.square(), tp);
            }),
  };
  for (const auto& layer : chains) expectParallelEqualsSerial(layer, groups);
}

TEST(TensorParallelOps, EqualSerialForwardAndBackward) {
  for (int tp : {1, 2, 4}) runInProcesses(tp, checkEveryOp);
}

TEST(TensorParallelOps, AreNoOpsOnOneRank) {
  runInProcesses(1, [](const RankContext&) {
    TestGroups groups = joinTestGroups();
    at::Tensor x = seededData({4, 3}, 1);
    Communicator& solo = *groups.solo;
    for (const at::Tensor& y :
         {copyToTensorRegion(x, solo), reduceFromTensorRegion(x, solo),
          gatherFromTensorRegion(x, solo), scatterToTensorRegion(x, solo),
          gatherFromSequenceRegion(x, solo), reduceScatterToSequenceRegion(x, solo),
          scatterToSequenceRegion(x, solo)}) {
      EXPECT_TRUE(y.is_same(x));
    }
  });
}

}  // namespace
}  // namespace strata::tensor_parallel

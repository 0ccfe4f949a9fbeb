#include "tp_test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/sharding.h"

namespace strata::tensor_parallel::testing {

TestGroups joinTestGroups() {
  TestGroups groups;
  groups.world = World::init();
  groups.tp = groups.world->worldComm();
  groups.solo =
      groups.world->newGroup("solo" + std::to_string(groups.world->rank()), {groups.world->rank()});
  return groups;
}

at::Tensor partOf(const at::Tensor& full, Sharding sharding, const Communicator& tp) {
  switch (sharding) {
    case Sharding::kSequence:
      return shardOf(full, 0, tp.rank(), tp.size());
    case Sharding::kLastDim:
      return shardOf(full, full.dim() - 1, tp.rank(), tp.size());
    case Sharding::kReplicated:
      break;
  }
  return full.clone();
}

at::Tensor seededData(at::IntArrayRef shape, uint64_t seed) {
  return seededNormal(shape, seed, 1.0);
}

void expectClose(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what << ": missing";
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  double worst = (actual - expected).abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(actual, expected, 1e-5, 1e-5))
      << what << ": largest difference " << worst;
}

void expectShardsOfSerial(const torch::nn::Module& parallel, const torch::nn::Module& serial,
                          const Communicator& tp, bool grads, const std::string& what) {
  auto serialParams = serial.named_parameters();
  auto parallelParams = parallel.named_parameters();
  ASSERT_EQ(parallelParams.size(), serialParams.size()) << what;
  for (const auto& param : parallelParams) {
    const at::Tensor* reference = serialParams.find(param.key());
    ASSERT_NE(reference, nullptr) << what << ": " << param.key();
    int64_t dim = shardDimOf(parallel, param.key());
    auto shard = [&](const at::Tensor& full) {
      return dim == kReplicated ? full : shardOf(full, dim, tp.rank(), tp.size());
    };
    std::string name = what + " " + param.key();
    expectClose(param.value().detach(), shard(reference->detach()), name);
    if (grads) expectClose(param.value().grad(), shard(reference->grad()), name + " grad");
  }
}

void expectParallelEqualsSerial(const LayerCase& layer, const TestGroups& groups) {
  SCOPED_TRACE(layer.name + " on tp " + std::to_string(groups.tp->size()));
  Communicator& tp = *groups.tp;
  bool differentiable = layer.input.is_floating_point();

  auto serial = layer.build(groups.solo);
  at::Tensor x = layer.input.clone().set_requires_grad(differentiable);
  at::Tensor y = layer.run(*serial, x, *groups.solo);
  at::Tensor g = seededData(y.sizes(), 4242);
  (y * g).sum().backward();

  auto parallel = layer.build(groups.tp);
  at::Tensor xPart = partOf(layer.input, layer.inputSharding, tp).set_requires_grad(differentiable);
  at::Tensor yPart = layer.run(*parallel, xPart, tp);
  expectClose(yPart.detach(), partOf(y.detach(), layer.outputSharding, tp), "output");
  (yPart * partOf(g, layer.outputSharding, tp)).sum().backward();

  if (differentiable) {
    EXPECT_GT(x.grad().abs().sum().item<double>(), 0.0) << "input gradient is zero";
    expectClose(xPart.grad(), partOf(x.grad(), layer.inputSharding, tp), "input grad");
  }
  for (const auto& param : serial->parameters()) {
    EXPECT_GT(param.grad().abs().sum().item<double>(), 0.0) << "a parameter gradient is zero";
  }
  expectShardsOfSerial(*parallel, *serial, tp, /*grads=*/true, layer.name);
}

}  // namespace strata::tensor_parallel::testing

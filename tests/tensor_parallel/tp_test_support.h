// Helpers for the tensor-parallel tests: the groups of a test rank, seeded
// data, and the parallel-equals-serial comparisons.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>

#include "strata/runtime/communicator.h"
#include "strata/runtime/world.h"

namespace strata::tensor_parallel::testing {

// Every rank of the test job is one tp group; `solo` is a group of this rank
// alone, on which the same layer classes run serially.
struct TestGroups {
  std::shared_ptr<World> world;
  std::shared_ptr<Communicator> tp;
  std::shared_ptr<Communicator> solo;
};
TestGroups joinTestGroups();

// How a parallel tensor relates to the serial one.
enum class Sharding { kReplicated, kSequence /* dim 0 */, kLastDim };

// This rank's part of the serial tensor `full`.
at::Tensor partOf(const at::Tensor& full, Sharding sharding, const Communicator& tp);

// Seeded N(0, 1) data, identical on every process.
at::Tensor seededData(at::IntArrayRef shape, uint64_t seed);

// EXPECT that |actual - expected| <= 1e-5 + 1e-5 |expected| everywhere.
void expectClose(const at::Tensor& actual, const at::Tensor& expected, const std::string& what);

// EXPECT each parameter (and, with grads, its gradient) of `parallel` to be
// this rank's shard of the same parameter of `serial`.
void expectShardsOfSerial(const torch::nn::Module& parallel, const torch::nn::Module& serial,
                          const Communicator& tp, bool grads, const std::string& what);

// One layer (or chain of communication functions) under test. `build` makes
// it on a group from a fixed seed; `run` applies it. The parallel input and
// output are `inputSharding` / `outputSharding` parts of the serial ones.
struct LayerCase {
  std::string name;
  std::function<std::shared_ptr<torch::nn::Module>(std::shared_ptr<Communicator>)> build;
  std::function<at::Tensor(torch::nn::Module&, const at::Tensor&, Communicator&)> run;
  at::Tensor input;
  Sharding inputSharding = Sharding::kReplicated;
  Sharding outputSharding = Sharding::kReplicated;
};

// Runs the case serially (on groups.solo) and in parallel (on groups.tp)
// with the loss sum(Y * G) for a fixed random G (each rank taking its part of
// G), and EXPECTs equal outputs, input gradients and parameter gradients
// (parallel = this rank's shard of serial), and non-zero gradients.
void expectParallelEqualsSerial(const LayerCase& layer, const TestGroups& groups);

// `run` for a module type: calls Impl::forward.
template <class Impl>
auto forwardOf() {
  return [](torch::nn::Module& module, const at::Tensor& x, Communicator&) {
    return dynamic_cast<Impl&>(module).forward(x);
  };
}

}  // namespace strata::tensor_parallel::testing

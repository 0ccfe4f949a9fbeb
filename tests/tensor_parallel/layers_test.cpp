// Dropout in the tensor-parallel layers against the same class on one rank,
// for tp in {2, 4}, with and without sequence parallel: forward output,
// input gradient and parameter gradients within 1e-5.
//
// The layer math is checked against plain LibTorch in reference_test.cpp;
// what remains here are the dropout masks, which only Strata's SeededDropout
// defines, so the serial side has to be the same class on a group of one.
// What these tests add is that a parallel run draws the serial run's masks:
// per global head for attention probabilities, per row under sequence
// parallel.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "strata/tensor_parallel/parallel_attention.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "test_shape.h"
#include "tp_test_support.h"

namespace strata::tensor_parallel {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;
using namespace strata::tensor_parallel::testing;

InitOptions testInit(uint64_t seed) { return InitOptions{seed, 0.2, 0.1}; }

Sharding activations(bool sequenceParallel) {
  return sequenceParallel ? Sharding::kSequence : Sharding::kReplicated;
}

at::Tensor hiddenStates() { return seededData({kSeq, kBatch, kHidden}, 11); }

template <class Holder, class Options>
auto builder(Options options) {
  return [options](std::shared_ptr<Communicator> tp) -> std::shared_ptr<torch::nn::Module> {
    return Holder(options, tp).ptr();
  };
}

void forEachTp(const std::function<void(const TestGroups&, bool sequenceParallel)>& check) {
  for (int tp : {2, 4}) {
    runInProcesses(tp, [&](const RankContext&) {
      TestGroups groups = joinTestGroups();
      for (bool sequenceParallel : {false, true}) {
        SCOPED_TRACE(sequenceParallel ? "sequence parallel" : "no sequence parallel");
        check(groups, sequenceParallel);
      }
    });
  }
}

TEST(TensorParallelLayers, SelfAttentionDropoutEqualsSerial) {
  forEachTp([](const TestGroups& groups, bool sp) {
    ParallelSelfAttentionOptions options{kHidden, kHeads, sp, 0.25, testInit(4)};
    expectParallelEqualsSerial(
        {"attention dropout 0.25", builder<ParallelSelfAttention>(options),
         forwardOf<ParallelSelfAttentionImpl>(), hiddenStates(), activations(sp), activations(sp)},
        groups);
  });
}

TEST(TensorParallelLayers, TransformerBlockWithDropoutEqualsSerial) {
  forEachTp([](const TestGroups& groups, bool sp) {
    ParallelTransformerBlockOptions options{kHidden, kHeads, kFfn, sp, 0.1, 0.1, testInit(5)};
    expectParallelEqualsSerial({"block", builder<ParallelTransformerBlock>(options),
                                forwardOf<ParallelTransformerBlockImpl>(), hiddenStates(),
                                activations(sp), activations(sp)},
                               groups);
  });
}

}  // namespace
}  // namespace strata::tensor_parallel

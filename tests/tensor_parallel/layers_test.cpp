// Every tensor-parallel layer against the same class on one rank, for tp in
// {1, 2, 4}, with and without sequence parallel: forward output, input
// gradient and parameter gradients within 1e-5.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/parallel_attention.h"
#include "strata/tensor_parallel/parallel_mlp.h"
#include "strata/tensor_parallel/row_parallel_linear.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"
#include "tp_test_support.h"

namespace strata::tensor_parallel {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;
using namespace strata::tensor_parallel::testing;

constexpr int64_t kSeq = 8, kBatch = 2, kHidden = 16, kHeads = 4, kFfn = 32, kVocab = 32;

InitOptions testInit(uint64_t seed) { return InitOptions{seed, 0.2, 0.1}; }

Sharding activations(bool sequenceParallel) {
  return sequenceParallel ? Sharding::kSequence : Sharding::kReplicated;
}

at::Tensor hiddenStates() { return seededData({kSeq, kBatch, kHidden}, 11); }

// [s, b] ids spread over the whole vocabulary, so every rank's slice is hit.
at::Tensor tokenIds() {
  return (seededData({kSeq, kBatch}, 5).abs() * 1000).to(at::kLong).remainder(kVocab);
}

template <class Holder, class Options>
auto builder(Options options) {
  return [options](std::shared_ptr<Communicator> tp) -> std::shared_ptr<torch::nn::Module> {
    return Holder(options, tp).ptr();
  };
}

void forEachTp(const std::function<void(const TestGroups&, bool sequenceParallel)>& check) {
  for (int tp : {1, 2, 4}) {
    runInProcesses(tp, [&](const RankContext&) {
      TestGroups groups = joinTestGroups();
      for (bool sequenceParallel : {false, true}) {
        SCOPED_TRACE(sequenceParallel ? "sequence parallel" : "no sequence parallel");
        check(groups, sequenceParallel);
      }
    });
  }
}

TEST(TensorParallelLayers, ColumnParallelLinearEqualsSerial) {
  forEachTp([](const TestGroups& groups, bool sp) {
    for (bool gather : {false, true}) {
      ColumnParallelLinearOptions options{kHidden, 3 * kHidden, true, gather, sp, testInit(1)};
      LayerCase layer{"column",
                      builder<ColumnParallelLinear>(options),
                      forwardOf<ColumnParallelLinearImpl>(),
                      hiddenStates(),
                      activations(sp),
                      gather ? Sharding::kReplicated : Sharding::kLastDim};
      expectParallelEqualsSerial(layer, groups);
    }
  });
}

TEST(TensorParallelLayers, RowParallelLinearEqualsSerial) {
  forEachTp([](const TestGroups& groups, bool sp) {
    for (bool inputIsParallel : {true, false}) {
      RowParallelLinearOptions options{kFfn, kHidden, true, inputIsParallel, sp, testInit(2)};
      LayerCase layer{"row",
                      builder<RowParallelLinear>(options),
                      forwardOf<RowParallelLinearImpl>(),
                      seededData({kSeq, kBatch, kFfn}, 12),
                      inputIsParallel ? Sharding::kLastDim : Sharding::kReplicated,
                      activations(sp)};
      expectParallelEqualsSerial(layer, groups);
    }
  });
}

TEST(TensorParallelLayers, MlpAndLayerNormEqualSerial) {
  forEachTp([](const TestGroups& groups, bool sp) {
    ParallelMLPOptions options{kHidden, kFfn, sp, testInit(3)};
    expectParallelEqualsSerial({"mlp", builder<ParallelMLP>(options), forwardOf<ParallelMLPImpl>(),
                                hiddenStates(), activations(sp), activations(sp)},
                               groups);
    auto buildNorm = [sp](std::shared_ptr<Communicator> tp) -> std::shared_ptr<torch::nn::Module> {
      return ParallelLayerNorm(kHidden, sp, tp).ptr();
    };
    expectParallelEqualsSerial({"layer norm", buildNorm, forwardOf<ParallelLayerNormImpl>(),
                                hiddenStates(), activations(sp), activations(sp)},
                               groups);
  });
}

TEST(TensorParallelLayers, SelfAttentionEqualsSerial) {
  forEachTp([](const TestGroups& groups, bool sp) {
    for (double dropout : {0.0, 0.25}) {
      ParallelSelfAttentionOptions options{kHidden, kHeads, sp, dropout, testInit(4)};
      expectParallelEqualsSerial(
          {"attention dropout " + std::to_string(dropout), builder<ParallelSelfAttention>(options),
           forwardOf<ParallelSelfAttentionImpl>(), hiddenStates(), activations(sp),
           activations(sp)},
          groups);
    }
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

TEST(TensorParallelLayers, VocabParallelEmbeddingAndCrossEntropyEqualSerial) {
  forEachTp([](const TestGroups& groups, bool sp) {
    at::Tensor ids = tokenIds();
    VocabParallelEmbeddingOptions options{kVocab, kHidden, sp, testInit(6)};
    expectParallelEqualsSerial(
        {"embedding", builder<VocabParallelEmbedding>(options),
         forwardOf<VocabParallelEmbeddingImpl>(), ids, Sharding::kReplicated, activations(sp)},
        groups);
    // Logits spread wide enough that the max shift matters.
    at::Tensor logits = 5.0 * seededData({kSeq, kBatch, kVocab}, 13);
    auto crossEntropy = [ids](torch::nn::Module&, const at::Tensor& z, Communicator& tp) {
      return vocabParallelCrossEntropy(z, ids, tp);
    };
    auto noParameters = [](std::shared_ptr<Communicator>) {
      return std::make_shared<torch::nn::Module>();
    };
    expectParallelEqualsSerial({"cross entropy", noParameters, crossEntropy, logits,
                                Sharding::kLastDim, Sharding::kReplicated},
                               groups);
  });
}

TEST(TensorParallelLayers, CrossEntropyMatchesLibTorch) {
  runInProcesses(1, [](const RankContext&) {
    TestGroups groups = joinTestGroups();
    at::Tensor logits = (5.0 * seededData({6, kVocab}, 3)).set_requires_grad(true);
    at::Tensor targets = at::arange(6) * 5;
    at::Tensor ours = vocabParallelCrossEntropy(logits, targets, *groups.solo);
    at::Tensor theirs = at::cross_entropy_loss(logits, targets, {}, at::Reduction::None);
    expectClose(ours, theirs, "per-token loss");
    at::Tensor ourGrad = torch::autograd::grad({ours.sum()}, {logits})[0];
    at::Tensor theirGrad = torch::autograd::grad({theirs.sum()}, {logits})[0];
    expectClose(ourGrad, theirGrad, "logit gradient");
  });
}

}  // namespace
}  // namespace strata::tensor_parallel

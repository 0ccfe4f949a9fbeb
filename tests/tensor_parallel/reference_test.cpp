// Every tensor-parallel layer against plain LibTorch (reference_math.h) on
// tp 1 and 2 (the block also on 4, one head per rank), with and without
// sequence parallel: outputs, input gradients and every parameter gradient,
// reassembled from the shards, within 1e-5 relative (reference_check.h).
// Unlike layers_test.cpp, the serial side never runs a Strata layer, so a
// mistake a layer would make at any tp (a wrong scale, a wrong head layout)
// fails here.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "multiprocess.h"
#include "reference_check.h"
#include "reference_math.h"
#include "strata/runtime/world.h"
#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/parallel_attention.h"
#include "strata/tensor_parallel/parallel_mlp.h"
#include "strata/tensor_parallel/row_parallel_linear.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"
#include "strata/tensor_parallel/vocab_parallel_linear_cross_entropy.h"
#include "test_shape.h"

namespace strata::tensor_parallel {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;
using namespace strata::tensor_parallel::testing;
namespace ref = strata::testing::reference;

// Biases non-zero, so a bias added twice or not at all shows.
InitOptions referenceInit(uint64_t seed) { return InitOptions{seed, 0.2, 0.1}; }

Sharding referenceActivations(bool sequenceParallel) {
  return sequenceParallel ? Sharding::kSequence : Sharding::kReplicated;
}

std::string spName(bool sequenceParallel) { return sequenceParallel ? " sequence parallel" : ""; }

at::Tensor referenceHiddenStates() {
  return seededData({kSeq, kBatch, kHidden}, 11);
}  // [s, b, hidden]

// [s, b] ids spread over the whole vocabulary, so every rank's rows are hit.
at::Tensor tokenIds(int64_t vocab) {
  return (seededData({kSeq, kBatch}, 5).abs() * 1000).to(at::kLong).remainder(vocab);
}

// Runs `check` on every rank of a tp group of each size in `tpSizes`.
void onTpGroups(const std::vector<int>& tpSizes,
                const std::function<void(const std::shared_ptr<Communicator>&)>& check) {
  for (int tp : tpSizes) {
    runInProcesses(tp, [&](const RankContext&) { check(World::init()->worldComm()); });
  }
}

// tp 1 takes the shortcuts a group of one allows (no collectives at all).
const std::vector<int> kLayerTpSizes = {1, 2};

template <class Impl>
std::function<at::Tensor(const at::Tensor&)> runOf(const std::shared_ptr<Impl>& layer) {
  return [layer](const at::Tensor& x) { return layer->forward(x); };
}

// The header's layout of each layer's parameters, under `prefix`.
std::map<std::string, int64_t> columnSplit(const std::string& prefix = "") {
  return {{prefix + "weight", 0}, {prefix + "bias", 0}};
}
std::map<std::string, int64_t> rowSplit(const std::string& prefix = "") {
  return {{prefix + "weight", 1}, {prefix + "bias", kNotSplit}};
}
std::map<std::string, int64_t> layerNormSplit(const std::string& prefix = "") {
  return {{prefix + "weight", kNotSplit}, {prefix + "bias", kNotSplit}};
}
std::map<std::string, int64_t> merged(std::initializer_list<std::map<std::string, int64_t>> parts) {
  std::map<std::string, int64_t> all;
  for (const auto& part : parts) all.insert(part.begin(), part.end());
  return all;
}
std::map<std::string, int64_t> mlpSplit(const std::string& prefix = "") {
  return merged({columnSplit(prefix + "fc1."), rowSplit(prefix + "fc2.")});
}
std::map<std::string, int64_t> attentionSplit(const std::string& prefix = "") {
  return merged({columnSplit(prefix + "qkv."), rowSplit(prefix + "proj.")});
}

ref::MlpWeights mlpWeights(const ParamMap& p, const std::string& prefix = "") {
  return {p.at(prefix + "fc1.weight"), p.at(prefix + "fc1.bias"), p.at(prefix + "fc2.weight"),
          p.at(prefix + "fc2.bias")};
}
ref::AttentionWeights attentionWeights(const ParamMap& p, const std::string& prefix = "") {
  return {p.at(prefix + "qkv.weight"), p.at(prefix + "qkv.bias"), p.at(prefix + "proj.weight"),
          p.at(prefix + "proj.bias")};
}
ref::LayerNormWeights layerNormWeights(const ParamMap& p, const std::string& prefix = "") {
  return {p.at(prefix + "weight"), p.at(prefix + "bias")};
}

// LayerNorm starts as the identity affine map (ones, zeros), which would
// hide a weight or bias that is never applied; give it seeded values, the
// same on every rank since both are replicated.
void perturb(ParallelLayerNormImpl& norm, uint64_t seed) {
  torch::NoGradGuard noGrad;
  norm.weight.copy_(1.0 + 0.3 * seededData({kHidden}, seed));
  norm.bias.copy_(0.3 * seededData({kHidden}, seed + 1));
}

// The serial tensor a layer draws from `seed` (init.h), with zero rows up to
// `paddedRows`: what its gathered shards must be, bit for bit.
at::Tensor seededMaster(int64_t rows, int64_t cols, uint64_t seed, double std, int64_t paddedRows) {
  at::Tensor master = seededNormal({rows, cols}, seed, std);          // [rows, cols]
  return at::cat({master, at::zeros({paddedRows - rows, cols})}, 0);  // [paddedRows, cols]
}

void expectEqual(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(torch::equal(actual, expected)) << what << " differs from the seeded draw";
}

// Each weight below is its layer's stream 0 of the seed; the shards of the
// ranks, gathered in rank order, must be exactly the serial draw.
TEST(TensorParallelReference, GatheredShardsAreTheSeededSerialWeights) {
  onTpGroups({2}, [](const std::shared_ptr<Communicator>& tp) {
    InitOptions init = referenceInit(7);
    uint64_t weightSeed = deriveSeed(init.seed, 0);
    // 31 outputs: the head pads its weight to 32 rows, 16 per rank.
    ColumnParallelLinearOptions head{kHidden, kVocab - 1, false, false, false, init, true, {}};
    auto column = ColumnParallelLinear(head, tp).ptr();
    expectEqual(gatherAlong(column->weight.detach(), 0, *tp),
                seededMaster(kVocab - 1, kHidden, weightSeed, init.weightStd, kVocab),
                "padded column weight");
    RowParallelLinearOptions rowOptions{kFfn, kHidden, true, true, false, init, {}};
    auto row = RowParallelLinear(rowOptions, tp).ptr();
    expectEqual(gatherAlong(row->weight.detach(), 1, *tp),
                seededMaster(kHidden, kFfn, weightSeed, init.weightStd, kHidden), "row weight");
    VocabParallelEmbeddingOptions tableOptions{kVocab - 1, kHidden, false, init};
    auto table = VocabParallelEmbedding(tableOptions, tp).ptr();
    expectEqual(gatherAlong(table->weight.detach(), 0, *tp),
                seededMaster(kVocab - 1, kHidden, weightSeed, init.weightStd, kVocab),
                "padded embedding table");
  });
}

TEST(TensorParallelReference, ColumnParallelLinearMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    for (bool sp : {false, true}) {
      for (bool gather : {false, true}) {
        ColumnParallelLinearOptions options{kHidden, 3 * kHidden,      true,  gather,
                                            sp,      referenceInit(1), false, {}};
        auto layer = ColumnParallelLinear(options, tp).ptr();
        auto reference = [](const at::Tensor& x, const ParamMap& p) {
          return ref::linear(x, p.at("weight"), p.at("bias"));
        };
        expectMatchesReference(
            {"column" + std::string(gather ? " gathered" : "") + spName(sp), layer, runOf(layer),
             columnSplit(), reference, referenceHiddenStates(), referenceActivations(sp),
             gather ? Sharding::kReplicated : Sharding::kLastDim},
            *tp);
      }
    }
  });
}

TEST(TensorParallelReference, RowParallelLinearMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    for (bool sp : {false, true}) {
      for (bool inputIsParallel : {true, false}) {
        RowParallelLinearOptions options{kFfn, kHidden,          true, inputIsParallel,
                                         sp,   referenceInit(2), {}};
        auto layer = RowParallelLinear(options, tp).ptr();
        auto reference = [](const at::Tensor& x, const ParamMap& p) {
          return ref::linear(x, p.at("weight"), p.at("bias"));
        };
        expectMatchesReference(
            {"row" + std::string(inputIsParallel ? "" : " splitting its input") + spName(sp), layer,
             runOf(layer), rowSplit(), reference, seededData({kSeq, kBatch, kFfn}, 12),
             inputIsParallel ? Sharding::kLastDim : Sharding::kReplicated,
             referenceActivations(sp)},
            *tp);
      }
    }
  });
}

TEST(TensorParallelReference, ParallelMlpMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    for (bool sp : {false, true}) {
      auto layer = ParallelMLP(ParallelMLPOptions{kHidden, kFfn, sp, referenceInit(3)}, tp).ptr();
      auto reference = [](const at::Tensor& x, const ParamMap& p) {
        return ref::mlp(x, mlpWeights(p));
      };
      expectMatchesReference(
          {"mlp" + spName(sp), layer, runOf(layer), mlpSplit(), reference, referenceHiddenStates(),
           referenceActivations(sp), referenceActivations(sp)},
          *tp);
    }
  });
}

TEST(TensorParallelReference, ParallelSelfAttentionMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    for (bool sp : {false, true}) {
      ParallelSelfAttentionOptions options{kHidden, kHeads, sp, 0.0, referenceInit(4)};
      auto layer = ParallelSelfAttention(options, tp).ptr();
      auto reference = [](const at::Tensor& x, const ParamMap& p) {
        return ref::causalSelfAttention(x, attentionWeights(p), kHeads);
      };
      expectMatchesReference(
          {"attention" + spName(sp), layer, runOf(layer), attentionSplit(), reference,
           referenceHiddenStates(), referenceActivations(sp), referenceActivations(sp)},
          *tp);
    }
  });
}

TEST(TensorParallelReference, ParallelLayerNormMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    for (bool sp : {false, true}) {
      auto layer = ParallelLayerNorm(kHidden, sp, tp).ptr();
      perturb(*layer, 21);
      auto reference = [](const at::Tensor& x, const ParamMap& p) {
        return ref::layerNorm(x, layerNormWeights(p));
      };
      expectMatchesReference(
          {"layer norm" + spName(sp), layer, runOf(layer), layerNormSplit(), reference,
           referenceHiddenStates(), referenceActivations(sp), referenceActivations(sp)},
          *tp);
    }
  });
}

TEST(TensorParallelReference, VocabParallelEmbeddingMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    for (bool sp : {false, true}) {
      // 31 rows: tp 2 pads the table with one zero row that no id selects.
      for (int64_t vocab : {kVocab, kVocab - 1}) {
        VocabParallelEmbeddingOptions options{vocab, kHidden, sp, referenceInit(6)};
        auto layer = VocabParallelEmbedding(options, tp).ptr();
        auto reference = [](const at::Tensor& ids, const ParamMap& p) {
          return ref::embedding(ids, p.at("weight"));
        };
        expectMatchesReference({"embedding vocab " + std::to_string(vocab) + spName(sp),
                                layer,
                                runOf(layer),
                                {{"weight", 0}},
                                reference,
                                tokenIds(vocab),
                                Sharding::kReplicated,
                                referenceActivations(sp)},
                               *tp);
      }
    }
  });
}

TEST(TensorParallelReference, VocabParallelCrossEntropyMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    at::Tensor ids = tokenIds(kVocab);
    auto crossEntropy = [ids, tp](const at::Tensor& logits) {
      return vocabParallelCrossEntropy(logits, ids, *tp);  // [s, b]
    };
    auto reference = [ids](const at::Tensor& logits, const ParamMap&) {
      return ref::crossEntropy(logits, ids);
    };
    // Logits spread wide enough that the max shift matters.
    at::Tensor logits = 5.0 * seededData({kSeq, kBatch, kVocab}, 13);  // [s, b, V]
    expectMatchesReference({"cross entropy",
                            std::make_shared<torch::nn::Module>(),
                            crossEntropy,
                            {},
                            reference,
                            logits,
                            Sharding::kLastDim,
                            Sharding::kReplicated},
                           *tp);
  });
}

// The head's product and the cross-entropy fused, in chunks of 3 tokens and
// groups of 5 (16 tokens: the last of each short), against the product and
// LibTorch's cross-entropy, mean over the tokens. The weight is a vocabulary-
// parallel table's of `vocab` rows, padded to a multiple of tp.
void expectLinearCrossEntropyMatchesLibTorch(int64_t vocab,
                                             const std::shared_ptr<Communicator>& tp) {
  VocabParallelEmbeddingOptions options{vocab, kHidden, false, referenceInit(7)};
  auto table = VocabParallelEmbedding(options, tp).ptr();
  // Padding rows that are not zero must change nothing: no logit, no gradient.
  int64_t width = table->weight.size(0), first = width * tp->rank();
  for (int64_t row = std::max(vocab - first, int64_t{0}); row < width; ++row)
    table->weight.data()[row].fill_(3.0);
  at::Tensor ids = tokenIds(vocab);  // [s, b]
  LinearCrossEntropyChunks chunks{3 * (table->weight.size(0) * 4), 5};
  auto fused = [table, ids, vocab, tp, chunks](const at::Tensor& x) {
    at::Tensor h = copyToTensorRegion(x, *tp).reshape({-1, kHidden});  // [s*b, hidden]
    return vocabParallelLinearCrossEntropy(h, table->weight, ids.reshape({-1}), vocab, *tp, chunks);
  };
  auto reference = [ids, vocab](const at::Tensor& x, const ParamMap& p) {
    at::Tensor weight = p.at("weight").narrow(0, 0, vocab);  // [V, hidden]
    return ref::crossEntropy(at::matmul(x, weight.t()), ids).mean();
  };
  // Hidden states spread wide enough that the max shift matters.
  expectMatchesReference({"linear cross entropy vocab " + std::to_string(vocab),
                          table,
                          fused,
                          {{"weight", 0}},
                          reference,
                          5.0 * referenceHiddenStates(),
                          Sharding::kReplicated,
                          Sharding::kReplicated},
                         *tp);
}

// 31 rows: tp 2 pads the table with one row.
TEST(TensorParallelReference, VocabParallelLinearCrossEntropyMatchesLibTorch) {
  onTpGroups(kLayerTpSizes, [](const std::shared_ptr<Communicator>& tp) {
    for (int64_t vocab : {kVocab, kVocab - 1}) expectLinearCrossEntropyMatchesLibTorch(vocab, tp);
  });
}

// 9 rows over tp 4 are 4 shards of 3: the last holds padding only, so its
// log-sum-exp is -inf and its softmax all zero.
TEST(TensorParallelReference, VocabParallelLinearCrossEntropyWithARankOfPaddingOnly) {
  onTpGroups({4}, [](const std::shared_ptr<Communicator>& tp) {
    expectLinearCrossEntropyMatchesLibTorch(9, tp);
  });
}

void expectBlockMatchesLibTorch(int tpSize) {
  onTpGroups({tpSize}, [](const std::shared_ptr<Communicator>& tp) {
    for (bool sp : {false, true}) {
      ParallelTransformerBlockOptions options{kHidden, kHeads,          kFfn, sp, 0.0,
                                              0.0,     referenceInit(5)};
      auto layer = ParallelTransformerBlock(options, tp).ptr();
      perturb(*layer->ln1, 31);
      perturb(*layer->ln2, 41);
      auto reference = [](const at::Tensor& x, const ParamMap& p) {
        ref::BlockWeights weights{layerNormWeights(p, "ln1."), attentionWeights(p, "attention."),
                                  layerNormWeights(p, "ln2."), mlpWeights(p, "mlp.")};
        return ref::transformerBlock(x, weights, kHeads);
      };
      auto splits = merged({layerNormSplit("ln1."), attentionSplit("attention."),
                            layerNormSplit("ln2."), mlpSplit("mlp.")});
      expectMatchesReference(
          {"block" + spName(sp), layer, runOf(layer), splits, reference, referenceHiddenStates(),
           referenceActivations(sp), referenceActivations(sp)},
          *tp);
    }
  });
}

TEST(TensorParallelReference, TransformerBlockMatchesLibTorchOnTp2) {
  expectBlockMatchesLibTorch(2);
}

// One head per rank.
TEST(TensorParallelReference, TransformerBlockMatchesLibTorchOnTp4) {
  expectBlockMatchesLibTorch(4);
}

}  // namespace
}  // namespace strata::tensor_parallel

// Bad sizes raise ConfigError naming the values, on every rank alike, before
// any communication: afterwards the group still works.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "strata/error.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/parallel_attention.h"
#include "strata/tensor_parallel/parallel_mlp.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"
#include "tp_test_support.h"

namespace strata::tensor_parallel {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;
using namespace strata::tensor_parallel::testing;

// EXPECTs `action` to throw ConfigError whose message contains each of `words`.
void expectConfigError(const std::function<void()>& action, std::vector<std::string> words) {
  try {
    action();
    ADD_FAILURE() << "no ConfigError; expected one mentioning " << words.front();
  } catch (const ConfigError& error) {
    std::string message = error.what();
    for (const auto& word : words) EXPECT_NE(message.find(word), std::string::npos) << message;
  }
}

TEST(TensorParallelErrors, IndivisibleSizesAreRefusedBeforeCommunicating) {
  runInProcesses(4, [](const RankContext&) {
    TestGroups groups = joinTestGroups();
    auto tp = groups.tp;
    expectConfigError(
        [&] {
          ColumnParallelLinear(
              ColumnParallelLinearOptions{16, 30, true, false, false, {}, false, {}}, tp);
        },
        {"output features 30", "tensor-parallel size 4"});
    expectConfigError(
        [&] {
          RowParallelLinear(RowParallelLinearOptions{30, 16, true, true, false, {}, {}}, tp);
        },
        {"input features 30", "tensor-parallel size 4"});
    expectConfigError(
        [&] {
          ParallelMLP(ParallelMLPOptions{16, 30, false, {}}, tp);
        },
        {"FFN size 30", "tensor-parallel size 4"});
    expectConfigError(
        [&] {
          ParallelSelfAttention(ParallelSelfAttentionOptions{24, 6, false, 0.0, {}}, tp);
        },
        {"number of heads 6", "tensor-parallel size 4"});
    expectConfigError(
        [&] {
          ParallelSelfAttention(ParallelSelfAttentionOptions{30, 4, false, 0.0, {}}, tp);
        },
        {"hidden size 30", "heads 4"});
    // A vocabulary tp does not divide is padded instead: 30 tokens, 32 rows.
    VocabParallelEmbedding padded(VocabParallelEmbeddingOptions{30, 16, false, {}}, tp);
    EXPECT_EQ(padded->weight.size(0), 8);
    expectConfigError([&] { padded(at::full({4, 2}, 30, at::kLong)); }, {"[0, 30)"});

    VocabParallelEmbeddingOptions sequenceParallel{32, 16, true, {}};
    VocabParallelEmbedding embedding(sequenceParallel, tp);
    at::Tensor sixTokens = at::zeros({6, 2}, at::kLong);
    expectConfigError([&] { embedding(sixTokens); }, {"sequence length", "6", "size 4"});
    expectConfigError(
        [&] {
          scatterToSequenceRegion(at::zeros({6, 2, 16}), *tp);
        },
        {"sequence length", "6", "size 4"});
    expectConfigError(
        [&] {
          reduceScatterToSequenceRegion(at::zeros({6, 2, 16}), *tp);
        },
        {"sequence length", "6", "size 4"});
    expectConfigError([&] { embedding(at::full({8, 2}, 32, at::kLong)); }, {"[0, 32)"});
    expectConfigError(
        [&] {
          vocabParallelCrossEntropy(at::zeros({8, 2, 8}), at::zeros({8, 3}, at::kLong), *tp);
        },
        {"[8, 2, 8]", "[8, 3]"});
    expectConfigError([] { SeededDropout(1.0, 0); }, {"dropout probability 1"});

    // Nobody was left inside a collective: the group still agrees.
    at::Tensor one = at::ones({1});
    tp->allReduce(one);
    EXPECT_EQ(one.item<float>(), 4.0f);
  });
}

}  // namespace
}  // namespace strata::tensor_parallel

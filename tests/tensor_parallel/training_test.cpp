// Parallel equals serial over training: a transformer block and a small GPT
// (vocab-parallel embedding -> 2 blocks -> final LayerNorm -> vocab-parallel
// LM head and loss), with dropout on, train 3 optimizer steps on tp = 2 to
// the same losses and parameters as the same model on one rank.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "multiprocess.h"
#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/sharding.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"
#include "test_shape.h"
#include "tp_test_support.h"

namespace strata::tensor_parallel {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;
using namespace strata::tensor_parallel::testing;

constexpr int kSteps = 3;

// ids [s, b] -> per-token loss [s, b], replicated on every tp rank.
class TinyGptImpl : public torch::nn::Module {
 public:
  TinyGptImpl(bool sequenceParallel, std::shared_ptr<Communicator> tp) {
    InitOptions init{77, 0.2, 0.0};
    embedding = register_module(
        "embedding",
        VocabParallelEmbedding(
            VocabParallelEmbeddingOptions{kVocab, kHidden, sequenceParallel, deriveInit(init, 0)},
            tp));
    for (int i = 0; i < 2; ++i) {
      ParallelTransformerBlockOptions options{
          kHidden, kHeads, kFfn, sequenceParallel, 0.1, 0.1, deriveInit(init, 1 + i)};
      blocks.push_back(
          register_module("block" + std::to_string(i), ParallelTransformerBlock(options, tp)));
    }
    finalNorm = register_module("final_norm", ParallelLayerNorm(kHidden, sequenceParallel, tp));
    ColumnParallelLinearOptions head{
        kHidden, kVocab, false, false, sequenceParallel, deriveInit(init, 9), false, {}};
    lmHead = register_module("lm_head", ColumnParallelLinear(head, tp));
    tp_ = tp;
  }

  at::Tensor forward(const at::Tensor& ids, const at::Tensor& targets) {
    at::Tensor h = embedding(ids);  // [s, b, hidden] or [s/p, b, hidden]
    for (auto& block : blocks) h = block(h);
    at::Tensor logits = lmHead(finalNorm(h));  // [s, b, V/p]
    return vocabParallelCrossEntropy(logits, targets, *tp_);
  }

  VocabParallelEmbedding embedding{nullptr};
  std::vector<ParallelTransformerBlock> blocks;
  ParallelLayerNorm finalNorm{nullptr};
  ColumnParallelLinear lmHead{nullptr};

 private:
  std::shared_ptr<Communicator> tp_;
};
TORCH_MODULE(TinyGpt);

at::Tensor tokens(uint64_t seed) {
  return (seededData({kSeq, kBatch}, seed).abs() * 1000).to(at::kLong).remainder(kVocab);
}

// Trains the GPT for kSteps SGD steps; returns the mean loss of each step.
// Not Adam: some gradients are zero up to rounding (the key bias shifts every
// score of a row equally, so softmax cancels it), and Adam's m / sqrt(v)
// turns rounding noise of 1e-9 into full-size steps of either sign.
std::vector<double> trainGpt(TinyGpt& model, Communicator& tp) {
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    at::Tensor loss = model(tokens(100 + step), tokens(200 + step)).mean();
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

// Trains the block for kSteps SGD steps on a squared-error loss; returns the
// loss of each step. Under sequence parallel each rank holds its rows of the
// output and of the loss, which are summed over tp to report it.
std::vector<double> trainBlock(ParallelTransformerBlock& block, bool sequenceParallel,
                               Communicator& tp) {
  torch::optim::SGD optimizer(block->parameters(), torch::optim::SGDOptions(0.1));
  Sharding rows = sequenceParallel ? Sharding::kSequence : Sharding::kReplicated;
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    at::Tensor x = partOf(seededData({kSeq, kBatch, kHidden}, 300 + step), rows, tp);
    at::Tensor target = partOf(seededData({kSeq, kBatch, kHidden}, 400 + step), rows, tp);
    at::Tensor loss = (block(x) - target).square().sum() / double(kSeq * kBatch * kHidden);
    loss.backward();
    optimizer.step();
    at::Tensor total = loss.detach().clone();
    if (sequenceParallel) tp.allReduce(total);
    losses.push_back(total.item<double>());
  }
  return losses;
}

void expectSameLosses(const std::vector<double>& parallel, const std::vector<double>& serial) {
  ASSERT_EQ(parallel.size(), serial.size());
  for (size_t step = 0; step < serial.size(); ++step) {
    EXPECT_NEAR(parallel[step], serial[step], 1e-5 * (1 + std::abs(serial[step])))
        << "step " << step;
  }
  // The model learns, so the comparison is not between constants.
  EXPECT_NE(serial.front(), serial.back());
}

TEST(TensorParallelTraining, TransformerBlockTrainsLikeSerial) {
  runInProcesses(2, [](const RankContext&) {
    TestGroups groups = joinTestGroups();
    for (bool sp : {false, true}) {
      SCOPED_TRACE(sp ? "sequence parallel" : "no sequence parallel");
      ParallelTransformerBlockOptions options{
          kHidden, kHeads, kFfn, sp, 0.1, 0.1, InitOptions{5, 0.2, 0.1}};
      ParallelTransformerBlock serial(options, groups.solo);
      ParallelTransformerBlock parallel(options, groups.tp);
      std::vector<double> serialLosses = trainBlock(serial, false, *groups.solo);
      expectSameLosses(trainBlock(parallel, sp, *groups.tp), serialLosses);
      expectShardsOfSerial(*parallel, *serial, *groups.tp, /*grads=*/false, "block");
    }
  });
}

TEST(TensorParallelTraining, SmallGptTrainsLikeSerial) {
  runInProcesses(2, [](const RankContext&) {
    TestGroups groups = joinTestGroups();
    for (bool sp : {false, true}) {
      SCOPED_TRACE(sp ? "sequence parallel" : "no sequence parallel");
      TinyGpt serial(sp, groups.solo);
      TinyGpt parallel(sp, groups.tp);
      std::vector<double> serialLosses = trainGpt(serial, *groups.solo);
      expectSameLosses(trainGpt(parallel, *groups.tp), serialLosses);
      expectShardsOfSerial(*parallel, *serial, *groups.tp, /*grads=*/false, "gpt");
      // The gathered shards are the serial parameters, as a checkpoint needs.
      auto serialParams = serial->named_parameters();
      for (const auto& [name, full] : gatherFullParameters(*parallel, *groups.tp)) {
        expectClose(full, serialParams[name].detach(), "full " + name);
      }
    }
  });
}

}  // namespace
}  // namespace strata::tensor_parallel

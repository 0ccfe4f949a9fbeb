// The generated corpus is worth learning: a bigram model (an embedding used
// as next-byte logits) trained through the whole data path (corpus, split,
// windows, sharded batches, AdamW, warmup + cosine) ends well below the
// byte-unigram entropy on held-out text within 150 steps.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "strata/config/optimizer.h"
#include "strata/data/batch_reader.h"
#include "strata/data/corpus.h"
#include "strata/data/tokenizer.h"
#include "strata/train/lr_schedule.h"

namespace strata::train {
namespace {

// Entropy of the byte distribution of `tokens`, in nats.
double unigramEntropyNats(const torch::Tensor& tokens) {
  torch::Tensor p = torch::bincount(tokens, {}, kByteVocabSize).to(torch::kDouble);
  p = p / p.sum();
  p = p.masked_select(p > 0);
  return -(p * p.log()).sum().item<double>();
}

double meanLoss(torch::nn::Embedding& logits, const Batch& batch) {
  torch::Tensor out = logits->forward(batch.input);  // [B, S, V]
  return torch::nn::functional::cross_entropy(out.flatten(0, 1), batch.target.flatten())
      .item<double>();
}

TEST(Learnability, BigramModelBeatsTheUnigramEntropy) {
  torch::manual_seed(0);
  std::string text = generateCorpus(7, 200000);
  TokenSplit split = splitTokens(torch::tensor(encodeBytes(text), torch::kLong), 0.05);
  ReaderOptions options;
  options.globalBatch = 16;
  options.seed = 3;
  BatchReader train(WindowDataset(split.train, 64, "train"), options);
  options.shuffle = false;
  BatchReader validation(WindowDataset(split.validation, 64, "validation"), options);

  torch::nn::Embedding logits(kByteVocabSize, kByteVocabSize);
  OptimConfig config;
  config.weightDecay = 0;
  auto optimizer = makeAdamW(logits->parameters(), config);
  WarmupCosineLr lr({0.1, 0.01, 10, 150});
  for (int step = 0; step < 150; ++step, lr.advance()) {
    lr.apply(*optimizer);
    Batch batch = train.next();
    torch::Tensor out = logits->forward(batch.input);
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(out.flatten(0, 1), batch.target.flatten());
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
  }
  torch::NoGradGuard noGrad;
  double heldOut = (meanLoss(logits, validation.next()) + meanLoss(logits, validation.next())) / 2;
  double unigram = unigramEntropyNats(split.train);
  EXPECT_LT(heldOut, unigram - 0.7) << "held-out " << heldOut << " nats, unigram " << unigram;
}

}  // namespace
}  // namespace strata::train

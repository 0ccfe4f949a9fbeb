// Strata's GPT under bf16 autocast on the CPU with a vocabulary that tp does
// not divide (GPT-2's 50257 over tp 2): the padding logits are masked with
// bfloat16's lowest value (float's overflows bfloat16), the loss is float32,
// finite and within 2e-2 relative of the float32 loss, and backward runs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <string>
#include <utility>

#include "multiprocess.h"
#include "strata/context_parallel/context_parallel.h"
#include "strata/models/gpt.h"
#include "strata/models/llama.h"
#include "strata/runtime/world.h"
#include "strata/train/precision.h"

namespace strata::models {
namespace {

GptConfig oddVocabularyGpt() {
  GptConfig c;
  c.layers = 2;
  c.hidden = 32;
  c.heads = 4;
  c.ffn = 64;
  c.vocab = 257;  // padded to 258 over tp 2: rank 1 holds one padding logit
  c.context = 16;
  c.tiedEmbeddings = true;
  c.geluTanh = true;
  return c;
}

TEST(GptBf16, PaddedVocabularyAtTp2MasksWithBfloat16sLowest) {
  strata::testing::runInProcesses(2, [](const strata::testing::RankContext& rank) {
    auto world = World::init();
    auto groups = world->parallelGroups(ParallelLayout(2, {1, 1, 1, 2}));
    torch::manual_seed(11);
    at::Tensor ids = torch::randint(257, {2, 16}, torch::kLong);
    at::Tensor targets = torch::randint(257, {2, 16}, torch::kLong);
    torch::nn::Sequential model = buildGpt(oddVocabularyGpt(), groups.tp);
    at::Tensor fp32 = nextTokenLoss(model->forward(ids), targets, *groups.tp);
    at::Tensor bf16;
    {
      train::PrecisionGuard precision("bf16", at::kCPU);
      at::Tensor logits = model->forward(ids);  // [s, b, 129]
      ASSERT_EQ(logits.scalar_type(), at::kBFloat16);
      if (rank.rank == 1) {
        EXPECT_EQ(logits.select(-1, 128).to(at::kFloat).max().item<float>(),
                  static_cast<float>(std::numeric_limits<c10::BFloat16>::lowest()));
      }
      bf16 = nextTokenLoss(logits, targets, *groups.tp);
    }
    EXPECT_EQ(bf16.scalar_type(), at::kFloat);
    EXPECT_TRUE(std::isfinite(bf16.item<double>()));
    EXPECT_NEAR(bf16.item<double>(), fp32.item<double>(), 2e-2 * fp32.item<double>());
    bf16.backward();
    for (const at::Tensor& p : model->parameters()) {
      ASSERT_TRUE(p.grad().defined());
      EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
    }
  });
}

// The largest difference between two gradients, relative to the largest entry.
double relativeDifference(const at::Tensor& actual, const at::Tensor& expected) {
  return (actual - expected).abs().max().item<double>() / expected.abs().max().item<double>();
}

// The head fused with the loss (fusedHeadLoss) against the same weights with
// the logits made whole, on tp 2 with the padded vocabulary: equal losses and
// gradients in float32 (with and without sequence parallel), and under bf16
// autocast within bfloat16's rounding of each other; without gradients the
// fused loss is the same.
TEST(GptBf16, FusedHeadLossMatchesTheLossOfTheLogits) {
  strata::testing::runInProcesses(2, [](const strata::testing::RankContext&) {
    auto world = World::init();
    auto groups = world->parallelGroups(ParallelLayout(2, {1, 1, 1, 2}));
    torch::manual_seed(11);
    at::Tensor ids = torch::randint(257, {2, 16}, torch::kLong);
    at::Tensor targets = torch::randint(257, {2, 16}, torch::kLong);
    for (auto [precision, sequenceParallel] :
         {std::pair{"fp32", false}, std::pair{"fp32", true}, std::pair{"bf16", false}}) {
      std::string what = std::string(precision) + (sequenceParallel ? " sequence parallel" : "");
      GptConfig config = oddVocabularyGpt();
      config.sequenceParallel = sequenceParallel;
      torch::nn::Sequential plain = buildGpt(config, groups.tp);
      config.fusedHeadLoss = true;
      torch::nn::Sequential fused = buildGpt(config, groups.tp);
      at::Tensor plainLoss, fusedLoss;
      {
        train::PrecisionGuard guard(precision, at::kCPU);
        plainLoss = modelOutputLoss(plain, plain->forward(ids), targets);
        fusedLoss = modelOutputLoss(fused, fused->forward(ids), targets);
      }
      {
        // Evaluation: no gradients wanted, the same loss.
        torch::NoGradGuard noGrad;
        train::PrecisionGuard guard(precision, at::kCPU);
        EXPECT_EQ(modelOutputLoss(fused, fused->forward(ids), targets).item<double>(),
                  fusedLoss.item<double>())
            << what << ": without gradients";
      }
      plainLoss.backward();
      fusedLoss.backward();
      bool bf16 = std::string(precision) == "bf16";
      EXPECT_NEAR(fusedLoss.item<double>(), plainLoss.item<double>(),
                  (bf16 ? 1e-2 : 1e-6) * plainLoss.item<double>())
          << what;
      auto plainParameters = plain->named_parameters();
      for (const auto& item : fused->named_parameters()) {
        EXPECT_LE(relativeDifference(item.value().grad(), plainParameters[item.key()].grad()),
                  bf16 ? 3e-2 : 1e-5)
            << what << ": " << item.key();
      }
    }
  });
}

// The Llama family under bf16 autocast at tp 2 with its one kv head
// replicated and a padded vocabulary: RMSNorm keeps the activations'
// bfloat16, rotary tables follow it, the float32 loss is within 2e-2 of the
// float32 model's, and every gradient (the replicated k/v weights' summed
// over tp) is finite.
TEST(LlamaBf16, Tp2MultiQueryTrainsUnderBf16Autocast) {
  strata::testing::runInProcesses(2, [](const strata::testing::RankContext&) {
    auto world = World::init();
    auto groups = world->parallelGroups(ParallelLayout(2, {1, 1, 1, 2}));
    torch::manual_seed(11);
    at::Tensor ids = torch::randint(257, {2, 16}, torch::kLong);
    at::Tensor targets = torch::randint(257, {2, 16}, torch::kLong);
    LlamaConfig c;
    c.layers = 2;
    c.hidden = 32;
    c.heads = 4;
    c.kvHeads = 1;
    c.ffn = 64;
    c.vocab = 257;
    c.context = 16;
    torch::nn::Sequential model = buildLlama(c, groups.tp);
    at::Tensor fp32 = nextTokenLoss(model->forward(ids), targets, *groups.tp);
    at::Tensor bf16;
    {
      train::PrecisionGuard precision("bf16", at::kCPU);
      at::Tensor logits = model->forward(ids);
      ASSERT_EQ(logits.scalar_type(), at::kBFloat16);
      bf16 = nextTokenLoss(logits, targets, *groups.tp);
    }
    EXPECT_EQ(bf16.scalar_type(), at::kFloat);
    EXPECT_NEAR(bf16.item<double>(), fp32.item<double>(), 2e-2 * fp32.item<double>());
    bf16.backward();
    for (const auto& item : model->named_parameters()) {
      ASSERT_TRUE(item.value().grad().defined()) << item.key();
      EXPECT_TRUE(torch::isfinite(item.value().grad()).all().item<bool>()) << item.key();
    }
  });
}

// Context parallelism under bf16 autocast: a Llama with each sequence split
// over cp 2 by ring attention (the blocks' scores and merges in float32)
// against the same model on whole sequences, both in bf16: the loss averaged
// over the cp ranks within 2e-2 of the whole-sequence loss, and every
// gradient, averaged over cp as the trainer averages it, within 3e-2.
TEST(LlamaBf16, Cp2RingMatchesWholeSequencesUnderBf16Autocast) {
  strata::testing::runInProcesses(2, [](const strata::testing::RankContext&) {
    auto world = World::init();
    auto groups = world->parallelGroups(ParallelLayout(2, {1, 1, 2, 1}));
    auto solo = world->newGroup("solo" + std::to_string(world->rank()), {world->rank()});
    auto cp = std::make_shared<context_parallel::ContextParallel>(
        context_parallel::ContextParallel{groups.cp, context_parallel::CpAlgorithm::kRing});
    torch::manual_seed(11);
    at::Tensor ids = torch::randint(256, {2, 16}, torch::kLong);
    at::Tensor targets = torch::randint(256, {2, 16}, torch::kLong);
    LlamaConfig c;
    c.layers = 2;
    c.hidden = 32;
    c.heads = 4;
    c.kvHeads = 2;
    c.ffn = 64;
    c.vocab = 256;
    c.context = 16;
    torch::nn::Sequential whole = buildLlama(c, solo), split = buildLlama(c, groups.tp, cp);
    at::Tensor wholeLoss, splitLoss;
    {
      train::PrecisionGuard precision("bf16", at::kCPU);
      wholeLoss = nextTokenLoss(whole->forward(ids), targets, *solo);
      splitLoss = nextTokenLoss(split->forward(context_parallel::localTokens(ids, *groups.cp)),
                                context_parallel::localTokens(targets, *groups.cp), *groups.tp);
    }
    wholeLoss.backward();
    splitLoss.backward();
    at::Tensor averaged = splitLoss.detach().clone();
    groups.cp->allReduce(averaged, ReduceOp::kAvg);
    EXPECT_NEAR(averaged.item<double>(), wholeLoss.item<double>(), 2e-2 * wholeLoss.item<double>());
    auto wholeParameters = whole->named_parameters();
    for (const auto& item : split->named_parameters()) {
      at::Tensor grad = item.value().grad().clone();
      ASSERT_TRUE(torch::isfinite(grad).all().item<bool>()) << item.key();
      groups.cp->allReduce(grad, ReduceOp::kAvg);
      at::Tensor expected = wholeParameters[item.key()].grad();
      EXPECT_LE(relativeDifference(grad, expected), 3e-2) << item.key();
    }
  });
}

}  // namespace
}  // namespace strata::models

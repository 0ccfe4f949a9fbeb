// Strata's Llama (grouped-query attention 4:2, rotary embeddings, RMSNorm,
// SwiGLU) on cuda:0 equals the same model on the CPU: logits, loss and every
// parameter's gradient within 1e-4 relative in float32 (on LibTorch 2.x the
// GPU's attention is the fused kernel, the CPU's too where it has one). Under
// bf16 autocast the float32 loss stays within 2e-2 of the float32 model's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cuda_test_support.h"
#include "strata/models/llama.h"
#include "strata/train/precision.h"
#include "trainer_test_util.h"

namespace strata::models {
namespace {

using cuda_testing::closeRelative;

LlamaConfig smallLlama() {
  LlamaConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.kvHeads = 2;
  c.ffn = 128;
  c.vocab = 256;
  c.context = 32;
  c.ropeTheta = 500000.0;
  return c;
}

TEST(CudaLlama, ForwardAndBackwardOnTheGpuMatchTheCpu) {
  STRATA_REQUIRE_CUDA();
  auto world = train::testing::singleProcessWorld();
  auto groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  at::Tensor ids = torch::randint(256, {4, 32}, torch::kLong);
  at::Tensor targets = torch::randint(256, {4, 32}, torch::kLong);
  torch::nn::Sequential cpu = buildLlama(smallLlama(), groups.tp);
  torch::nn::Sequential gpu = buildLlama(smallLlama(), groups.tp);
  gpu->to(at::Device("cuda:0"));
  at::Tensor cpuLogits = cpu->forward(ids);
  at::Tensor gpuLogits = gpu->forward(ids.cuda());
  EXPECT_TRUE(closeRelative(gpuLogits, cpuLogits, 1e-4));
  nextTokenLoss(cpuLogits, targets, *groups.tp).backward();
  nextTokenLoss(gpuLogits, targets.cuda(), *groups.tp).backward();
  auto expected = cpu->named_parameters();
  for (const auto& item : gpu->named_parameters())
    EXPECT_TRUE(closeRelative(item.value().grad(), expected[item.key()].grad(), 1e-4))
        << item.key();
}

TEST(CudaLlama, Bf16AutocastKeepsTheLossInFloat32AndClose) {
  STRATA_REQUIRE_CUDA();
  auto world = train::testing::singleProcessWorld();
  auto groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  at::Tensor ids = torch::randint(256, {4, 32}, torch::kLong).cuda();
  at::Tensor targets = torch::randint(256, {4, 32}, torch::kLong).cuda();
  torch::nn::Sequential gpu = buildLlama(smallLlama(), groups.tp);
  gpu->to(at::Device("cuda:0"));
  at::Tensor fp32 = nextTokenLoss(gpu->forward(ids), targets, *groups.tp);
  at::Tensor bf16;
  {
    train::PrecisionGuard precision("bf16", at::kCUDA);
    at::Tensor logits = gpu->forward(ids);
    EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
    bf16 = nextTokenLoss(logits, targets, *groups.tp);
  }
  EXPECT_EQ(bf16.scalar_type(), at::kFloat);
  EXPECT_TRUE(closeRelative(bf16, fp32, 2e-2));
}

}  // namespace
}  // namespace strata::models

// Strata's GPT (its tensor-parallel layers at tp = 1) on cuda:0 equals the
// same model on the CPU: logits, loss and every parameter's gradient, within
// 1e-4 relative in float32. Under bf16 autocast on the GPU the loss stays
// within 2e-2 relative of the float32 one, and the loss itself is float32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cuda_test_support.h"
#include "runtime/torch_compat.h"
#include "strata/models/gpt.h"
#include "strata/train/precision.h"
#include "trainer_test_util.h"

namespace strata::models {
namespace {

using cuda_testing::closeRelative;

GptConfig smallGpt() {
  GptConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.ffn = 128;
  c.vocab = 256;
  c.context = 32;
  c.tiedEmbeddings = true;
  return c;
}

struct Pass {
  at::Tensor logits, loss;
  std::vector<at::Tensor> grads;
};

Pass run(torch::nn::Sequential model, const at::Tensor& ids, const at::Tensor& targets,
         Communicator& tp) {
  Pass pass;
  pass.logits = model->forward(ids);
  pass.loss = nextTokenLoss(pass.logits, targets, tp);
  pass.loss.backward();
  for (const at::Tensor& p : model->parameters()) pass.grads.push_back(p.grad());
  return pass;
}

TEST(CudaGpt, ForwardAndBackwardOnTheGpuMatchTheCpu) {
  STRATA_REQUIRE_CUDA();
  auto world = train::testing::singleProcessWorld();
  auto groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  at::Tensor ids = torch::randint(256, {4, 32}, torch::kLong);
  at::Tensor targets = torch::randint(256, {4, 32}, torch::kLong);
  torch::nn::Sequential cpu = buildGpt(smallGpt(), groups.tp);
  torch::nn::Sequential gpu = buildGpt(smallGpt(), groups.tp);
  gpu->to(at::Device("cuda:0"));
  Pass expected = run(cpu, ids, targets, *groups.tp);
  Pass actual = run(gpu, ids.cuda(), targets.cuda(), *groups.tp);
  EXPECT_TRUE(closeRelative(actual.logits, expected.logits, 1e-4));
  EXPECT_TRUE(closeRelative(actual.loss, expected.loss, 1e-4));
  ASSERT_EQ(actual.grads.size(), expected.grads.size());
  for (size_t i = 0; i < expected.grads.size(); ++i)
    EXPECT_TRUE(closeRelative(actual.grads[i], expected.grads[i], 1e-4)) << "parameter " << i;
}

TEST(CudaGpt, Bf16AutocastKeepsTheLossInFloat32AndClose) {
  STRATA_REQUIRE_CUDA();
  auto world = train::testing::singleProcessWorld();
  auto groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  at::Tensor ids = torch::randint(256, {4, 32}, torch::kLong).cuda();
  at::Tensor targets = torch::randint(256, {4, 32}, torch::kLong).cuda();
  torch::nn::Sequential gpu = buildGpt(smallGpt(), groups.tp);
  gpu->to(at::Device("cuda:0"));
  at::Tensor fp32 = nextTokenLoss(gpu->forward(ids), targets, *groups.tp);
  at::Tensor bf16;
  {
    train::PrecisionGuard precision("bf16", at::kCUDA);
    at::Tensor logits = gpu->forward(ids);
    EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
    bf16 = nextTokenLoss(logits, targets, *groups.tp);
  }
  EXPECT_FALSE(compat::autocastEnabled(at::kCUDA));  // the guard put it back
  EXPECT_EQ(bf16.scalar_type(), at::kFloat);
  EXPECT_TRUE(closeRelative(bf16, fp32, 2e-2));
}

}  // namespace
}  // namespace strata::models

// The trainer on a GPU (train.device = cuda): bf16 autocast learns the demo
// task (the generated corpus) as float32 on the CPU does, and a checkpoint
// written on the GPU resumes on the CPU and the other way round, with every
// parameter restored exactly and training going on from there.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <numeric>

#include "cuda_test_support.h"
#include "strata/report/memory.h"
#include "strata/train/trainer.h"
#include "trainer_test_util.h"

namespace strata::train {
namespace {

using cuda_testing::closeRelative;
using testing::singleProcessWorld;
using testing::tinyConfig;
using testing::trainSteps;

double meanOf(const std::vector<double>& values, size_t first, size_t count) {
  return std::accumulate(values.begin() + first, values.begin() + first + count, 0.0) / count;
}

TEST(CudaTrainer, Bf16OnTheGpuLearnsTheDemoTaskLikeFloat32OnTheCpu) {
  STRATA_REQUIRE_CUDA();
  TrainConfig config = tinyConfig();
  config.train.steps = 60;
  config.train.lr = 3e-3;
  TrainConfig gpuConfig = config;
  gpuConfig.train.device = "cuda";
  gpuConfig.train.precision = "bf16";
  Trainer cpu(config, singleProcessWorld());
  Trainer gpu(gpuConfig, singleProcessWorld());
  std::vector<double> expected = trainSteps(cpu, 60);
  std::vector<double> actual = trainSteps(gpu, 60);
  // Learns: the last ten steps' mean loss is well under the first steps'.
  EXPECT_LT(meanOf(actual, 50, 10), 0.8 * meanOf(actual, 0, 3));
  // Like float32: the same curve within bf16's rounding (8 bits of mantissa).
  EXPECT_NEAR(actual[0], expected[0], 2e-2 * expected[0]);
  EXPECT_NEAR(meanOf(actual, 50, 10), meanOf(expected, 50, 10), 5e-2 * meanOf(expected, 50, 10));
  EXPECT_GT(peakCudaBytes(), 0);
}

std::vector<at::Tensor> parameters(const Trainer& trainer) {
  std::vector<at::Tensor> values;
  for (const ParameterShard& shard : trainer.parameterShards())
    values.push_back(shard.tensor.detach().cpu());
  return values;
}

void expectSameParameters(const Trainer& a, const Trainer& b) {
  std::vector<at::Tensor> left = parameters(a), right = parameters(b);
  ASSERT_EQ(left.size(), right.size());
  for (size_t i = 0; i < left.size(); ++i) EXPECT_TRUE(torch::equal(left[i], right[i])) << i;
}

TEST(CudaTrainer, CheckpointWrittenOnTheGpuResumesOnTheCpuAndBack) {
  STRATA_REQUIRE_CUDA();
  std::string dir = testing::sharedDir("cuda_checkpoint");
  TrainConfig cpuConfig = tinyConfig();
  cpuConfig.checkpoint.dir = dir;
  TrainConfig gpuConfig = cpuConfig;
  gpuConfig.train.device = "cuda";

  Trainer first(gpuConfig, singleProcessWorld());
  trainSteps(first, 3);
  first.saveCheckpoint();

  Trainer second(cpuConfig, singleProcessWorld());
  ASSERT_TRUE(second.resumeFromLatest());
  expectSameParameters(second, first);
  // Float32 on both: the same next steps within the GPU's summation order.
  std::vector<double> onGpu = trainSteps(first, 2), onCpu = trainSteps(second, 2);
  for (size_t i = 0; i < onGpu.size(); ++i) EXPECT_NEAR(onCpu[i], onGpu[i], 1e-4 * onGpu[i]);
  second.saveCheckpoint();

  Trainer third(gpuConfig, singleProcessWorld());
  ASSERT_TRUE(third.resumeFromLatest());
  expectSameParameters(third, second);
  std::vector<double> resumed = trainSteps(third, 1), continued = trainSteps(second, 1);
  EXPECT_NEAR(resumed[0], continued[0], 1e-4 * continued[0]);
  testing::removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train

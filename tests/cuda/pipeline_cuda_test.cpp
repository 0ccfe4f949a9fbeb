// The in-process pipeline with its stages on cuda:0 (one GPU stands in for
// several: every stage gets the same device) equals the serial model trained
// on the CPU, for every schedule of the CPU matrix, and a pipeline that
// crosses between the CPU and the GPU moves activations and gradients both
// ways. Tolerance: 1e-4 relative, float32 on both sides (LibTorch keeps TF32
// off for matrix products by default; the GPU only sums in other orders).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cuda_test_support.h"
#include "pipeline_fixtures.h"
#include "strata/pipeline/pipeline.h"

namespace strata::pipeline::testing {
namespace {

using cuda_testing::closeRelative;
constexpr double kTolerance = 1e-4;

void expectClose(const Pipeline& pipe, const Trained& piped, const Trained& serial,
                 const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(piped.losses.size(), serial.losses.size());
  for (size_t i = 0; i < serial.losses.size(); ++i)
    EXPECT_NEAR(piped.losses[i], serial.losses[i], kTolerance * std::abs(serial.losses[i]));
  for (const Stage& stage : pipe.stages()) {
    for (int i = 0; i < stage.numLayers(); ++i) {
      auto mine = stage.layers()[i].ptr()->parameters();
      auto reference = serial.model->ptr(stage.firstLayer() + i)->parameters();
      ASSERT_EQ(mine.size(), reference.size());
      for (size_t p = 0; p < mine.size(); ++p)
        EXPECT_TRUE(closeRelative(mine[p], reference[p], kTolerance))
            << "layer " << stage.firstLayer() + i << " parameter " << p;
    }
  }
}

TEST(CudaPipeline, EveryScheduleOnTheGpuMatchesTheCpuSerialModel) {
  STRATA_REQUIRE_CUDA();
  for (int p : {2, 3}) {
    for (const Config& config : matrixFor(p)) {
      int64_t batch = 2 * config.microbatches;
      Trained serial = trainSerial(kSeed, batch);
      torch::nn::Sequential model = makeMlp(kSeed);
      Pipeline pipe(model, std::vector<at::Device>(p, at::Device("cuda:0")), config.options());
      Trained piped = trainPipelined(pipe, model, batch);
      expectClose(pipe, piped, serial, config.describe(p));
    }
  }
}

TEST(CudaPipeline, StagesAlternatingCpuAndGpuMatchTheSerialModel) {
  STRATA_REQUIRE_CUDA();
  std::vector<at::Device> devices{at::kCPU, at::Device("cuda:0"), at::kCPU};
  for (const char* schedule : {"gpipe", "1f1b", "zb-h1"}) {
    Config config{schedule, 3};
    Trained serial = trainSerial(kSeed, 6);
    torch::nn::Sequential model = makeMlp(kSeed);
    Pipeline pipe(model, devices, config.options());
    Trained piped = trainPipelined(pipe, model, 6);
    expectClose(pipe, piped, serial, config.describe(3) + " cpu/cuda/cpu");
  }
}

}  // namespace
}  // namespace strata::pipeline::testing

// globalGradNorm and clipGradNorm in one process: the float64 norm of the
// gradients counted here against one computed by hand, an uncounted
// replica's nan still making the norm non-finite, and clipping's scale.
#include "strata/train/grad_norm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "multiprocess.h"
#include "strata/runtime/world.h"

namespace strata::train {
namespace {

at::Tensor parameterWithGrad(std::vector<float> values) {
  at::Tensor p = torch::zeros({static_cast<int64_t>(values.size())}).requires_grad_();
  p.mutable_grad() = torch::tensor(values);
  return p;
}

void normOfCountedTerms(const testing::RankContext&) {
  auto world = World::init();
  Communicator& one = world->comm();
  NormGroups groups{one, one, one};
  at::Tensor counted = parameterWithGrad({3, 4});
  at::Tensor replica = parameterWithGrad({12, 0});  // counted on another rank
  GradientTerms gradients;
  gradients.terms = {{counted, true}, {replica, false}};
  EXPECT_DOUBLE_EQ(globalGradNorm(gradients, groups), 5.0);

  // Clipping to 1 scales every gradient, counted here or not, by 1 / 5.
  double norm = clipGradNorm(gradients, 1.0, groups);
  EXPECT_DOUBLE_EQ(norm, 5.0);
  double scale = 1.0 / (5.0 + 1e-6);
  EXPECT_FLOAT_EQ(counted.grad()[1].item<float>(), static_cast<float>(4 * scale));
  EXPECT_FLOAT_EQ(replica.grad()[0].item<float>(), static_cast<float>(12 * scale));

  replica.mutable_grad()[1] = NAN;
  EXPECT_TRUE(std::isnan(globalGradNorm(gradients, groups)));
}

TEST(GradNorm, CountsItsOwnTermsAndANanAnywhere) { testing::runInProcesses(1, normOfCountedTerms); }

// A chunk holding flat elements [4, 12) of a buffer whose slots [2, 6) and
// [9, 10) belong to parameters counted on another rank.
TEST(GradNorm, ChunkRunsSetTheSlotsCountedElsewhereApart) {
  ShardedNormTerm term = shardedNormTerm(torch::zeros({8}), 4, {{9, 1}, {2, 4}});
  ASSERT_EQ(term.runs.size(), 4u);
  int64_t expected[4][3] = {{0, 2, 0}, {2, 3, 1}, {5, 1, 0}, {6, 2, 1}};  // offset, numel, counted
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(term.runs[r].offset, expected[r][0]) << r;
    EXPECT_EQ(term.runs[r].numel, expected[r][1]) << r;
    EXPECT_EQ(term.runs[r].counted, expected[r][2] == 1) << r;
  }
  // Nothing counted elsewhere: one run, whatever the spans outside the chunk.
  ShardedNormTerm whole = shardedNormTerm(torch::zeros({8}), 4, {{0, 4}, {12, 3}});
  ASSERT_EQ(whole.runs.size(), 1u);
  EXPECT_EQ(whole.runs[0].numel, 8);
  EXPECT_TRUE(whole.runs[0].counted);
}

void normOfShardedChunk(const testing::RankContext&) {
  auto world = World::init();
  Communicator& one = world->comm();
  NormGroups groups{one, one, one};
  at::Tensor chunk = torch::tensor({3.0f, 100.0f, 4.0f});  // 100 counts on another rank
  GradientTerms gradients;
  gradients.sharded = {shardedNormTerm(chunk, 10, {{11, 1}})};
  EXPECT_DOUBLE_EQ(globalGradNorm(gradients, groups), 5.0);
  clipGradNorm(gradients, 1.0, groups);  // every element scaled, counted or not
  EXPECT_FLOAT_EQ(chunk[1].item<float>(), static_cast<float>(100 / (5.0 + 1e-6)));
  chunk[1] = NAN;
  EXPECT_TRUE(std::isnan(globalGradNorm(gradients, groups)));
}

TEST(GradNorm, ClipScaleIsOneBelowTheLimitAndWithoutOne) {
  EXPECT_EQ(clipScale(0.5, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(clipScale(4.0, 1.0), 1.0 / (4.0 + 1e-6));
  EXPECT_EQ(clipScale(1e9, 0.0), 1.0);  // no clipping
  EXPECT_TRUE(std::isnan(clipScale(NAN, 1.0)));
}

TEST(GradNorm, ShardedChunkCountsItsRunsAndANanInAnyRun) {
  testing::runInProcesses(1, normOfShardedChunk);
}

}  // namespace
}  // namespace strata::train

// globalGradNorm and clipGradNorm in one process: the float64 norm of the
// gradients counted here against one computed by hand, an uncounted
// replica's nan still making the norm non-finite, and clipping's scale.
#include "strata/train/loop/grad_norm.h"

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

}  // namespace
}  // namespace strata::train

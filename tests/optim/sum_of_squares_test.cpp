// sumOfSquares (and its host variant) against a float64 copy squared and summed, on lengths around
// the vector loop's width, and on tensors it converts (strided, float64).
#include "strata/optim/sum_of_squares.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace strata::optim {
namespace {

double reference(const at::Tensor& values) {
  return values.to(torch::kDouble).pow(2).sum().item<double>();
}

TEST(SumOfSquares, EqualsAFloat64Sum) {
  torch::manual_seed(7);
  for (int64_t n : {0, 1, 7, 8, 9, 65535, 200003}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    at::Tensor values = torch::randn({n}) * 1e-3;
    at::Tensor sum = sumOfSquares(values);
    EXPECT_EQ(sum.scalar_type(), at::kDouble);
    EXPECT_EQ(sum.dim(), 0);
    EXPECT_NEAR(sum.item<double>(), reference(values), 1e-12 * (1 + reference(values)));
    EXPECT_EQ(sumOfSquaresOnHost(values), sum.item<double>());
  }
}

TEST(SumOfSquares, ConvertsOtherTensors) {
  at::Tensor matrix = torch::randn({30, 17});
  EXPECT_NEAR(sumOfSquares(matrix.t()).item<double>(), reference(matrix), 1e-9);
  EXPECT_NEAR(sumOfSquaresOnHost(matrix.t()), reference(matrix), 1e-9);
  at::Tensor doubles = torch::randn({33}, torch::kDouble);
  EXPECT_DOUBLE_EQ(sumOfSquares(doubles).item<double>(), reference(doubles));
}

}  // namespace
}  // namespace strata::optim

#include "llama_logits_check.h"

#include <gtest/gtest.h>

namespace strata::train::testing {

torch::Tensor expectHuggingFaceLogits(torch::nn::Sequential& model, const std::string& folder,
                                      const std::map<std::string, RawTensor>& weights,
                                      const torch::Tensor& ids) {
  torch::NoGradGuard noGrad;
  torch::Tensor strata = model->forward(ids).transpose(0, 1);  // [b, s, V]
  torch::Tensor hf = huggingFaceLlamaLogits(folder, weights, ids);
  EXPECT_EQ(strata.sizes(), hf.sizes());
  if (strata.sizes() != hf.sizes()) return hf;
  double relative = ((strata - hf).norm() / hf.norm()).item<double>();
  EXPECT_LT(relative, 1e-5) << "max difference " << (strata - hf).abs().max().item<double>();
  return hf;
}

}  // namespace strata::train::testing

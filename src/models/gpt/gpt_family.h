// The GPT family (models/gpt.h) behind the ModelFamily interface: the
// architectures "strata" (exact GELU) and "gpt2" (GPT-2's tanh GELU).
#pragma once

#include "strata/models/model_family.h"

namespace strata::models {

class GptFamily : public ModelFamily {
 public:
  std::string name() const override { return "gpt"; }
  void check(const ModelSpec& spec, int tp) const override;
  torch::nn::Sequential build(const ModelSpec& spec, std::shared_ptr<Communicator> tp,
                              std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
                              std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr,
                              const std::vector<bool>& held = {},
                              HeldAs heldAs = HeldAs::kWhole) const override;
  std::shared_ptr<torch::nn::Module> buildLayer(
      const ModelSpec& spec, int64_t layer, std::shared_ptr<Communicator> tp,
      std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
      std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr) const override;
  int64_t parameterCount(const ModelSpec& spec) const override;
  int64_t matmulParameters(const ModelSpec& spec) const override;
  std::unique_ptr<HuggingFaceLayout> huggingFace(const ModelSpec& spec) const override;
};

}  // namespace strata::models

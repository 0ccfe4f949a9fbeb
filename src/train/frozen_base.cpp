#include "train/frozen_base.h"

#include <torch/torch.h>

#include "strata/tensor_parallel/lora.h"

namespace strata::train {

void freezeBase(torch::nn::Module& model, const FinetuneConfig& finetune) {
  if (!finetune.lora()) return;
  torch::NoGradGuard noGrad;
  bool bf16 = finetune.baseDtype == "bf16";
  for (auto& item : model.named_parameters()) {
    at::Tensor parameter = item.value();
    bool adapter = tensor_parallel::isLoraParameter(item.key());
    parameter.requires_grad_(adapter);
    if (bf16 && !adapter && tensor_parallel::isProjectionWeight(item.key()))
      parameter.set_data(parameter.to(at::kBFloat16));
  }
}

}  // namespace strata::train

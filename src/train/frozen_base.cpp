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
    if (!bf16 || adapter || !tensor_parallel::isProjectionWeight(item.key())) continue;
    // A ZeRO-3 shell (one zero seen through zero strides) stays a shell,
    // of the new dtype: its unit's sharding lays it out by that dtype.
    bool shell = parameter.numel() > 1 && !parameter.is_non_overlapping_and_dense();
    parameter.set_data(
        shell ? at::zeros({1}, parameter.options().dtype(at::kBFloat16)).expand(parameter.sizes())
              : parameter.to(at::kBFloat16));
  }
}

}  // namespace strata::train

#include "strata/tensor_parallel/layer_norm.h"

#include <torch/torch.h>

#include "strata/tensor_parallel/comm_ops.h"

namespace strata::tensor_parallel {

ParallelLayerNormImpl::ParallelLayerNormImpl(int64_t hidden, bool sequenceParallel,
                                             std::shared_ptr<Communicator> tp, double eps)
    : hidden_(hidden), sequenceParallel_(sequenceParallel), eps_(eps), tp_(std::move(tp)) {
  weight = register_parameter("weight", at::ones({hidden}));
  bias = register_parameter("bias", at::zeros({hidden}));
}

at::Tensor ParallelLayerNormImpl::forward(const at::Tensor& x) {
  if (!sequenceParallel_) return at::layer_norm(x, {hidden_}, weight, bias, eps_);
  return at::layer_norm(x, {hidden_}, copyToTensorRegion(weight, *tp_),
                        copyToTensorRegion(bias, *tp_), eps_);
}

}  // namespace strata::tensor_parallel

#include "strata/tensor_parallel/rms_norm.h"

#include <torch/torch.h>

#include "strata/tensor_parallel/comm_ops.h"

namespace strata::tensor_parallel {

ParallelRMSNormImpl::ParallelRMSNormImpl(int64_t hidden, double eps, bool sequenceParallel,
                                         std::shared_ptr<Communicator> tp)
    : eps_(eps), sequenceParallel_(sequenceParallel), tp_(std::move(tp)) {
  weight = register_parameter("weight", at::ones({hidden}));
}

at::Tensor ParallelRMSNormImpl::forward(const at::Tensor& x) {
  at::Tensor x32 = x.to(at::kFloat);
  at::Tensor inverseRms = at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps_);  // [..., 1]
  at::Tensor normed = (x32 * inverseRms).to(x.scalar_type());
  return normed * (sequenceParallel_ ? copyToTensorRegion(weight, *tp_) : weight);
}

}  // namespace strata::tensor_parallel

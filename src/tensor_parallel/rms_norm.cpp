#include "strata/tensor_parallel/rms_norm.h"

#include <torch/torch.h>

#include "strata/ops/rms_norm.h"
#include "strata/tensor_parallel/comm_ops.h"

namespace strata::tensor_parallel {

ParallelRMSNormImpl::ParallelRMSNormImpl(int64_t hidden, double eps, bool sequenceParallel,
                                         std::shared_ptr<Communicator> tp)
    : eps_(eps), sequenceParallel_(sequenceParallel), tp_(std::move(tp)) {
  weight = register_parameter("weight", at::ones({hidden}));
}

at::Tensor ParallelRMSNormImpl::forward(const at::Tensor& x) {
  return ops::rmsNorm(x, sequenceParallel_ ? copyToTensorRegion(weight, *tp_) : weight, eps_);
}

}  // namespace strata::tensor_parallel

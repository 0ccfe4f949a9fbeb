#include "strata/tensor_parallel/comm_ops.h"

#include <torch/torch.h>

#include "collectives.h"

namespace strata::tensor_parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The group travels to backward inside the context as an address: autograd
// contexts hold only IValues. The caller keeps the communicator alive.
void rememberGroup(AutogradContext* ctx, Communicator& tp) {
  ctx->saved_data["tp"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&tp));
}

Communicator& groupOf(AutogradContext* ctx) {
  return *reinterpret_cast<Communicator*>(static_cast<intptr_t>(ctx->saved_data["tp"].toInt()));
}

// f(x) = x;  dL/dx = sum_r dL_r/dy  (each rank's gradient is partial).
struct CopyToTensorRegion : torch::autograd::Function<CopyToTensorRegion> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* tp) {
    rememberGroup(ctx, *tp);
    return x.view_as(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {detail::allReduceSum(grads[0], groupOf(ctx)), at::Tensor()};
  }
};

// f(x_0, ..., x_{p-1}) = sum_r x_r;  dL/dx_r = dL/dy  (the loss is replicated).
struct ReduceFromTensorRegion : torch::autograd::Function<ReduceFromTensorRegion> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* tp) {
    return detail::allReduceSum(x, *tp);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0], at::Tensor()};
  }
};

// y = [x_0 | x_1 | ... | x_{p-1}] (last dim);  dL/dx_r = (dL/dy)[..., r-th slice].
struct GatherFromTensorRegion : torch::autograd::Function<GatherFromTensorRegion> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* tp) {
    rememberGroup(ctx, *tp);
    return detail::allGatherLastDim(x, *tp);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor& grad = grads[0];
    return {detail::localSlice(grad, grad.dim() - 1, groupOf(ctx)), at::Tensor()};
  }
};

// y_r = x[..., r-th slice];  dL/dx = [dL_0/dy_0 | ... | dL_{p-1}/dy_{p-1}].
struct ScatterToTensorRegion : torch::autograd::Function<ScatterToTensorRegion> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* tp) {
    rememberGroup(ctx, *tp);
    return detail::localSlice(x, x.dim() - 1, *tp);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {detail::allGatherLastDim(grads[0], groupOf(ctx)), at::Tensor()};
  }
};

// y = [x_0; x_1; ...; x_{p-1}] (dim 0);  dL/dx_r = (sum_q dL_q/dy)[r-th rows].
struct GatherFromSequenceRegion : torch::autograd::Function<GatherFromSequenceRegion> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* tp) {
    rememberGroup(ctx, *tp);
    return detail::allGatherFirstDim(x, *tp);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {detail::reduceScatterFirstDim(grads[0], groupOf(ctx)), at::Tensor()};
  }
};

// y_r = (sum_q x_q)[r-th rows];  dL/dx_q = [dL_0/dy_0; ...; dL_{p-1}/dy_{p-1}].
struct ReduceScatterToSequenceRegion : torch::autograd::Function<ReduceScatterToSequenceRegion> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* tp) {
    rememberGroup(ctx, *tp);
    return detail::reduceScatterFirstDim(x, *tp);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {detail::allGatherFirstDim(grads[0], groupOf(ctx)), at::Tensor()};
  }
};

// y_r = x[r-th rows];  dL/dx = [dL_0/dy_0; ...; dL_{p-1}/dy_{p-1}].
struct ScatterToSequenceRegion : torch::autograd::Function<ScatterToSequenceRegion> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* tp) {
    rememberGroup(ctx, *tp);
    return detail::localSlice(x, 0, *tp);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {detail::allGatherFirstDim(grads[0], groupOf(ctx)), at::Tensor()};
  }
};

// Splitting dim 0 checks divisibility up front so the error is a sequence error.
void requireSequenceDivisible(const at::Tensor& x, const Communicator& tp) {
  detail::requireDivisible(x.size(0), "sequence length (dimension 0)", tp);
}

}  // namespace

at::Tensor copyToTensorRegion(const at::Tensor& x, Communicator& tp) {
  if (tp.size() == 1) return x;
  return CopyToTensorRegion::apply(x, &tp);
}

at::Tensor reduceFromTensorRegion(const at::Tensor& x, Communicator& tp) {
  if (tp.size() == 1) return x;
  return ReduceFromTensorRegion::apply(x, &tp);
}

at::Tensor gatherFromTensorRegion(const at::Tensor& x, Communicator& tp) {
  if (tp.size() == 1) return x;
  return GatherFromTensorRegion::apply(x, &tp);
}

at::Tensor scatterToTensorRegion(const at::Tensor& x, Communicator& tp) {
  detail::requireDivisible(x.size(-1), "last dimension of size", tp);
  if (tp.size() == 1) return x;
  return ScatterToTensorRegion::apply(x, &tp);
}

at::Tensor gatherFromSequenceRegion(const at::Tensor& x, Communicator& tp) {
  if (tp.size() == 1) return x;
  return GatherFromSequenceRegion::apply(x, &tp);
}

at::Tensor reduceScatterToSequenceRegion(const at::Tensor& x, Communicator& tp) {
  requireSequenceDivisible(x, tp);
  if (tp.size() == 1) return x;
  return ReduceScatterToSequenceRegion::apply(x, &tp);
}

at::Tensor scatterToSequenceRegion(const at::Tensor& x, Communicator& tp) {
  requireSequenceDivisible(x, tp);
  if (tp.size() == 1) return x;
  return ScatterToSequenceRegion::apply(x, &tp);
}

at::Tensor enterTensorRegion(const at::Tensor& x, bool sequenceParallel, Communicator& tp) {
  return sequenceParallel ? gatherFromSequenceRegion(x, tp) : copyToTensorRegion(x, tp);
}

}  // namespace strata::tensor_parallel

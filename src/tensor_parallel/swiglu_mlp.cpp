#include "strata/tensor_parallel/swiglu_mlp.h"

#include <torch/torch.h>

#include "collectives.h"
#include "strata/ops/swiglu.h"
#include "strata/tensor_parallel/comm_ops.h"

namespace strata::tensor_parallel {
namespace {

ColumnParallelLinearOptions columns(const SwiGluMlpOptions& options, uint64_t stream,
                                    const std::string& name) {
  ColumnParallelLinearOptions c;
  c.inFeatures = options.hidden;
  c.outFeatures = options.ffn;
  c.bias = false;
  c.init = deriveInit(options.init, stream);
  c.lora = options.lora.on(name);
  return c;
}

}  // namespace

ParallelSwiGluMlpImpl::ParallelSwiGluMlpImpl(const SwiGluMlpOptions& options,
                                             std::shared_ptr<Communicator> tp)
    : sequenceParallel_(options.sequenceParallel), tp_(tp) {
  detail::requireDivisible(options.ffn, "SwiGLU MLP ffn size", *tp);
  RowParallelLinearOptions rows;
  rows.inFeatures = options.ffn;
  rows.outFeatures = options.hidden;
  rows.bias = false;
  rows.sequenceParallel = options.sequenceParallel;
  rows.init = deriveInit(options.init, 2);
  rows.lora = options.lora.on("down");
  gate = register_module("gate", ColumnParallelLinear(columns(options, 0, "gate"), tp));
  up = register_module("up", ColumnParallelLinear(columns(options, 1, "up"), tp));
  down = register_module("down", RowParallelLinear(rows, tp));
}

at::Tensor ParallelSwiGluMlpImpl::forward(const at::Tensor& x) {
  at::Tensor entered = enterTensorRegion(x, sequenceParallel_, *tp_);  // [s, b, hidden]
  at::Tensor inner = ops::swiglu(gate->forwardEntered(entered), up->forwardEntered(entered));
  return down(inner);  // [s, b, ffn/p] -> [s, b, hidden] (or [s/p, b, hidden])
}

}  // namespace strata::tensor_parallel

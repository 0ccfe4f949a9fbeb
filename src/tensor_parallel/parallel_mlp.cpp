#include "strata/tensor_parallel/parallel_mlp.h"

#include <torch/torch.h>

#include "collectives.h"
#include "strata/ops/gelu.h"

namespace strata::tensor_parallel {
ParallelMLPImpl::ParallelMLPImpl(const ParallelMLPOptions& options,
                                 std::shared_ptr<Communicator> tp)
    : geluTanh_(options.geluTanh) {
  detail::requireDivisible(options.ffn, "ParallelMLP FFN size", *tp);
  ColumnParallelLinearOptions up;
  up.inFeatures = options.hidden;
  up.outFeatures = options.ffn;
  up.sequenceParallel = options.sequenceParallel;
  up.init = deriveInit(options.init, 0);
  RowParallelLinearOptions down;
  down.inFeatures = options.ffn;
  down.outFeatures = options.hidden;
  down.sequenceParallel = options.sequenceParallel;
  down.init = deriveInit(options.init, 1);
  fc1 = register_module("fc1", ColumnParallelLinear(up, tp));
  fc2 = register_module("fc2", RowParallelLinear(down, tp));
}

at::Tensor ParallelMLPImpl::forward(const at::Tensor& x) {
  // GELU acts elementwise, so it commutes with the column split of fc1.
  return fc2(ops::gelu(fc1(x), geluTanh_));  // [s, b, hidden] via [s, b, ffn/p]
}

}  // namespace strata::tensor_parallel

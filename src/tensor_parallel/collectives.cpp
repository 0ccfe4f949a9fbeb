#include "collectives.h"

#include <torch/torch.h>

#include "strata/error.h"

namespace strata::tensor_parallel::detail {

void requireDivisible(int64_t size, const std::string& what, const Communicator& tp) {
  if (size % tp.size() != 0) {
    throw ConfigError(what + " " + std::to_string(size) +
                      " is not divisible by the tensor-parallel size " + std::to_string(tp.size()) +
                      " (group " + tp.name() + ")");
  }
}

at::Tensor allReduceSum(const at::Tensor& x, Communicator& tp) {
  at::Tensor sum = x.contiguous().clone();
  tp.allReduce(sum);
  return sum;
}

at::Tensor allGatherFirstDim(const at::Tensor& x, Communicator& tp) {
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes[0] *= tp.size();
  at::Tensor gathered = at::empty(sizes, x.options());
  tp.allGather(gathered, x.contiguous());
  return gathered;
}

at::Tensor allGatherLastDim(const at::Tensor& x, Communicator& tp) {
  // Gather whole tensors as rows of a [p, numel] buffer, then lay the p
  // pieces side by side along the last dimension.
  at::Tensor rows = at::empty({tp.size(), x.numel()}, x.options());
  tp.allGather(rows, x.contiguous().reshape({1, x.numel()}));
  std::vector<int64_t> stacked{tp.size()};
  for (int64_t d : x.sizes()) stacked.push_back(d);
  return at::cat(rows.view(stacked).unbind(0), -1);
}

at::Tensor reduceScatterFirstDim(const at::Tensor& x, Communicator& tp) {
  requireDivisible(x.size(0), "dimension 0 (sequence) of size", tp);
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes[0] /= tp.size();
  at::Tensor mine = at::empty(sizes, x.options());
  tp.reduceScatter(mine, x.contiguous());
  return mine;
}

at::Tensor localSlice(const at::Tensor& x, int64_t dim, const Communicator& tp) {
  int64_t size = x.size(dim);
  requireDivisible(size, "dimension " + std::to_string(dim) + " of size", tp);
  int64_t part = size / tp.size();
  return x.narrow(dim, part * tp.rank(), part).clone(at::MemoryFormat::Contiguous);
}

}  // namespace strata::tensor_parallel::detail

#include "all_to_all.h"

#include <torch/torch.h>

#include <vector>

namespace strata::context_parallel::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct AllToAllFunction : torch::autograd::Function<AllToAllFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t splitDim,
                            int64_t concatDim, Communicator* group) {
    ctx->saved_data["group"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(group));
    ctx->saved_data["split"] = splitDim;
    ctx->saved_data["concat"] = concatDim;
    return allToAll(x, splitDim, concatDim, *group);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* group =
        reinterpret_cast<Communicator*>(static_cast<intptr_t>(ctx->saved_data["group"].toInt()));
    at::Tensor grad = allToAll(grads[0], ctx->saved_data["concat"].toInt(),
                               ctx->saved_data["split"].toInt(), *group);
    return {grad, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor allToAll(const at::Tensor& x, int64_t splitDim, int64_t concatDim, Communicator& group) {
  int size = group.size();
  // The pieces as consecutive rows: [size * c, the other dims of x].
  at::Tensor rows = x.movedim(splitDim, 0).contiguous();
  at::Tensor received = at::empty_like(rows);
  std::vector<int64_t> splits(static_cast<size_t>(size), rows.size(0) / size);
  group.allToAll(received, rows, splits, splits);
  std::vector<at::Tensor> pieces = received.chunk(size, 0);
  for (at::Tensor& piece : pieces) piece = piece.movedim(0, splitDim);
  return at::cat(pieces, concatDim);
}

at::Tensor allToAllFunction(const at::Tensor& x, int64_t splitDim, int64_t concatDim,
                            Communicator& group) {
  if (group.size() == 1) return x;
  return AllToAllFunction::apply(x, splitDim, concatDim, &group);
}

}  // namespace strata::context_parallel::detail

#include "all_to_all.h"

#include <torch/torch.h>

#include <vector>

namespace strata::context_parallel::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int kAllToAllTag = 3;

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
  int size = group.size(), rank = group.rank();
  std::vector<at::Tensor> outgoing = x.chunk(size, splitDim);
  std::vector<at::Tensor> incoming(static_cast<size_t>(size));
  std::vector<WorkHandle> work;
  // Round o pairs each rank with the ranks o before and o after it; even
  // ranks send first so that no two neighbours both wait on a send.
  for (int offset = 1; offset < size; ++offset) {
    int to = (rank + offset) % size, from = (rank + size - offset) % size;
    outgoing[to] = outgoing[to].contiguous();
    incoming[from] = at::empty_like(outgoing[from], at::MemoryFormat::Contiguous);
    if (rank % 2 == 0) work.push_back(group.sendAsync(outgoing[to], to, kAllToAllTag));
    work.push_back(group.recvAsync(incoming[from], from, kAllToAllTag));
    if (rank % 2 != 0) work.push_back(group.sendAsync(outgoing[to], to, kAllToAllTag));
  }
  incoming[rank] = outgoing[rank];
  for (WorkHandle& w : work) w->wait();
  return at::cat(incoming, concatDim);
}

at::Tensor allToAllFunction(const at::Tensor& x, int64_t splitDim, int64_t concatDim,
                            Communicator& group) {
  if (group.size() == 1) return x;
  return AllToAllFunction::apply(x, splitDim, concatDim, &group);
}

}  // namespace strata::context_parallel::detail

// Internal: the identity node through which FullyShardedDataParallel passes
// a unit's input (forward(unit, input, body)), to learn when the unit's
// backward in a pass is over. Nothing blocks; the callback runs on the
// autograd engine's thread.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>

namespace strata::data_parallel {

// The identity, whose backward calls back when the gradient of its input,
// the unit's, is complete: the unit's backward in this pass is then over, as
// this node was created before every node of the unit's forward and the
// engine runs the ready node created last first.
struct WatchInput : public torch::autograd::Function<WatchInput> {
  using Callback = std::function<void()>;
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input,
                            const Callback* onGradient) {
    ctx->saved_data["callback"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(onGradient));
    return input.view_as(input);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto* onGradient = reinterpret_cast<const Callback*>(
        static_cast<intptr_t>(ctx->saved_data["callback"].toInt()));
    (*onGradient)();
    return {grads[0], at::Tensor()};
  }
};

}  // namespace strata::data_parallel

#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"

#include <torch/torch.h>

#include "strata/error.h"

namespace strata::tensor_parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void checkInputs(const at::Tensor& logits, const at::Tensor& targets, const Communicator& tp) {
  std::vector<int64_t> leading = logits.sizes().vec();
  leading.pop_back();
  if (leading != targets.sizes().vec()) {
    throw ConfigError("vocabParallelCrossEntropy: logits " + c10::str(logits.sizes()) +
                      " and targets " + c10::str(targets.sizes()) +
                      " differ in their leading dimensions");
  }
  int64_t vocab = logits.size(-1) * tp.size();
  if (targets.numel() > 0 &&
      (targets.min().item<int64_t>() < 0 || targets.max().item<int64_t>() >= vocab)) {
    throw ConfigError("vocabParallelCrossEntropy: targets outside the vocabulary [0, " +
                      std::to_string(vocab) + ")");
  }
}

struct VocabParallelCrossEntropyFunction
    : torch::autograd::Function<VocabParallelCrossEntropyFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits,
                            const at::Tensor& targets, Communicator* tp) {
    int64_t shard = logits.size(-1);
    int64_t first = shard * tp->rank();
    // M = global max per token; subtracting it keeps exp() finite.
    at::Tensor maxLogit = std::get<0>(logits.max(-1)).contiguous();  // [...]
    if (tp->size() > 1) tp->allReduce(maxLogit, ReduceOp::kMax);
    // One [..., V/p] tensor for z - M, then exp(z - M), then the softmax,
    // each in place: with GPT-2's 50257 logits a token, every full-size
    // tensor less is a pass over memory less.
    at::Tensor probs = logits - maxLogit.unsqueeze(-1);

    at::Tensor outside = (targets < first).logical_or(targets >= first + shard);
    at::Tensor local = (targets - first).masked_fill(outside, 0);
    at::Tensor targetLogit =
        probs.gather(-1, local.unsqueeze(-1)).squeeze(-1).masked_fill(outside, 0.0);
    probs.exp_();
    // One all-reduce for both sums: [S; z_t - M], each [...].
    at::Tensor sums = at::stack({probs.sum(-1), targetLogit}).contiguous();
    if (tp->size() > 1) tp->allReduce(sums);

    probs.div_(sums[0].unsqueeze(-1));
    ctx->save_for_backward({probs, local, outside});
    return sums[0].log() - sums[1];
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& softmax = saved[0];  // [..., V/p]
    const at::Tensor& local = saved[1];
    const at::Tensor& outside = saved[2];
    // d loss / d z = (softmax - onehot(t)) g, the one-hot only where t is
    // local: one full-size product, then g taken off at the targets.
    at::Tensor g = grads[0].unsqueeze(-1);
    at::Tensor onehot = outside.logical_not().to(softmax.scalar_type()).unsqueeze(-1);
    at::Tensor grad = softmax * g;
    grad.scatter_add_(-1, local.unsqueeze(-1), -onehot * g);
    return {grad, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor vocabParallelCrossEntropy(const at::Tensor& logits, const at::Tensor& targets,
                                     Communicator& tp) {
  checkInputs(logits, targets, tp);
  return VocabParallelCrossEntropyFunction::apply(logits, targets, &tp);
}

}  // namespace strata::tensor_parallel

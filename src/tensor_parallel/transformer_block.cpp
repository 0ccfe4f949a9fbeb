#include "strata/tensor_parallel/transformer_block.h"

#include <torch/torch.h>

#include "strata/error.h"

namespace strata::tensor_parallel {
namespace {

// Before any member is built, so every rank throws alike.
const ParallelTransformerBlockOptions& checked(const ParallelTransformerBlockOptions& options) {
  const context_parallel::ContextParallel* cp = options.contextParallel.get();
  if (cp && cp->comm->size() > 1 && options.hiddenDropout > 0)
    throw ConfigError("dropout " + std::to_string(options.hiddenDropout) +
                      " under context parallelism: its masks would not be those of the whole "
                      "sequence; set dropout to 0 with cp > 1");
  return options;
}

}  // namespace

ParallelTransformerBlockImpl::ParallelTransformerBlockImpl(
    const ParallelTransformerBlockOptions& options, std::shared_ptr<Communicator> tp,
    torch::nn::AnyModule ownMlp)
    : ownMlp_(std::move(ownMlp)),
      sequenceParallel_(checked(options).sequenceParallel),
      tp_(tp),
      attentionResidualDropout_(options.hiddenDropout, deriveSeed(options.init.seed, 2)),
      mlpResidualDropout_(options.hiddenDropout, deriveSeed(options.init.seed, 3)) {
  register_buffer("attention_residual_dropout_calls", attentionResidualDropout_.callCounter());
  register_buffer("mlp_residual_dropout_calls", mlpResidualDropout_.callCounter());
  ParallelSelfAttentionOptions attn;
  attn.hidden = options.hidden;
  attn.heads = options.heads;
  attn.sequenceParallel = options.sequenceParallel;
  attn.attentionDropout = options.attentionDropout;
  attn.init = deriveInit(options.init, 0);
  attn.contextParallel = options.contextParallel;
  attn.documents = options.documents;
  ParallelMLPOptions ff;
  ff.hidden = options.hidden;
  ff.ffn = options.ffn;
  ff.sequenceParallel = options.sequenceParallel;
  ff.geluTanh = options.geluTanh;
  ff.init = deriveInit(options.init, 1);
  // Attention and MLP check their sizes before building anything.
  attention = ParallelSelfAttention(attn, tp);
  if (ownMlp_.is_empty()) mlp = ParallelMLP(ff, tp);
  ln1 = register_module("ln1", ParallelLayerNorm(options.hidden, options.sequenceParallel, tp));
  register_module("attention", attention);
  ln2 = register_module("ln2", ParallelLayerNorm(options.hidden, options.sequenceParallel, tp));
  if (ownMlp_.is_empty())
    register_module("mlp", mlp);
  else
    register_module("mlp", ownMlp_.ptr());
}

at::Tensor ParallelTransformerBlockImpl::forward(const at::Tensor& x) {
  at::Tensor h = x + residualDropout(attentionResidualDropout_, attention(ln1(x)));
  return h + residualDropout(mlpResidualDropout_, runMlp(ln2(h)));
}

at::Tensor ParallelTransformerBlockImpl::runMlp(const at::Tensor& x) {
  return ownMlp_.is_empty() ? mlp(x) : ownMlp_.forward<at::Tensor>(x);
}

at::Tensor ParallelTransformerBlockImpl::residualDropout(SeededDropout& dropout,
                                                         const at::Tensor& x) {
  return sequenceParallel_ ? dropout.sequenceSharded(x, is_training(), *tp_)
                           : dropout.replicated(x, is_training());
}

}  // namespace strata::tensor_parallel

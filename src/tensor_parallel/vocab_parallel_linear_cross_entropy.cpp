#include "strata/tensor_parallel/vocab_parallel_linear_cross_entropy.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>

#include "runtime/torch_compat.h"
#include "strata/error.h"

namespace strata::tensor_parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void checkInputs(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                 int64_t vocab, const Communicator& tp) {
  auto fail = [&](const std::string& why) {
    throw ConfigError("vocabParallelLinearCrossEntropy: hidden " + c10::str(hidden.sizes()) +
                      ", weight " + c10::str(weight.sizes()) + ", targets " +
                      c10::str(targets.sizes()) + ": " + why);
  };
  if (hidden.dim() != 2 || weight.dim() != 2 || targets.dim() != 1)
    fail("expected hidden [T, H], weight [V/tp, H] and targets [T]");
  if (hidden.size(1) != weight.size(1)) fail("hidden and weight differ in width");
  if (hidden.size(0) != targets.size(0)) fail("hidden and targets differ in tokens");
  if (hidden.size(0) == 0) fail("no tokens");
  int64_t padded = weight.size(0) * tp.size();
  if (vocab <= padded - tp.size() || vocab > padded)
    fail("vocabulary " + std::to_string(vocab) + " does not fill the " + std::to_string(padded) +
         " rows of the tp " + std::to_string(tp.size()) + " shards");
  if (targets.numel() > 0 &&
      (targets.min().item<int64_t>() < 0 || targets.max().item<int64_t>() >= vocab))
    fail("targets outside the vocabulary [0, " + std::to_string(vocab) + ")");
}

// This rank's columns of the vocabulary and which of them are real.
struct VocabSlice {
  int64_t first = 0;  // global id of local column 0
  int64_t width = 0;  // columns held (V/tp)
  int64_t real = 0;   // columns below the vocabulary's end
};

// One group of tokens: its losses, and with `grads` the gradients of its
// hidden rows and, with `weightGrads`, its share of the weight's gradient
// (unscaled: of the sum of the losses).
struct GroupResult {
  at::Tensor losses;      // [n] float32
  at::Tensor gradHidden;  // [n, H] product dtype
  at::Tensor gradWeight;  // [V/tp, H] product dtype; undefined for a frozen weight
};

// Makes a chunk's log-sum-exps [n, 1] and target logits [n] global over tp.
// On entry lse holds this rank's lse_r (-inf for a rank of padding only)
// and targetLogit is zero on every rank but the target's owner. The global
//   lse = top + log sum_r exp(lse_r - top),  top = max_r lse_r,
// takes two all-reduces; the target logits are summed in the second.
void combineOverTp(at::Tensor& lse, at::Tensor& targetLogit, Communicator& tp) {
  if (tp.size() == 1) return;
  at::Tensor top = lse.clone();
  tp.allReduce(top, ReduceOp::kMax);
  int64_t n = lse.size(0);
  at::Tensor packed = at::cat({(lse - top).exp_().squeeze(1), targetLogit});  // [2n]
  tp.allReduce(packed);
  targetLogit = packed.narrow(0, n, n);
  lse = top + packed.narrow(0, 0, n).log().unsqueeze(1);
}

// logits [n, V/tp] of n tokens (the product's dtype) -> their losses [n],
// and when `probs` is defined ([n, V/tp], the logits' dtype; may be `logits`
// itself) it gets softmax(z) - onehot(t) on this rank's columns, zero on its
// padding. z is taken in float32 (`scratch`, [n, V/tp], when the logits are
// not; else the logits themselves, overwritten). One exponential an entry:
//   m = max_j z_j,  e_j = exp(z_j - m),  lse_r = m + log sum_j e_j,
//   loss = lse - z_t,  p_j = e_j exp(m - lse).
at::Tensor lossesOfChunk(const at::Tensor& logits, const at::Tensor& probs,
                         const at::Tensor& scratch, const at::Tensor& targets,
                         const VocabSlice& slice, Communicator& tp) {
  int64_t n = logits.size(0);
  at::Tensor z = scratch.defined() ? scratch.copy_(logits) : logits;  // [n, V/tp] float32
  at::Tensor outside = (targets < slice.first).logical_or(targets >= slice.first + slice.width);
  at::Tensor local = (targets - slice.first).masked_fill(outside, 0).unsqueeze(1);  // [n, 1]
  at::Tensor targetLogit = z.gather(1, local).squeeze(1).masked_fill(outside, 0.0);
  at::Tensor real = z.narrow(1, 0, slice.real);  // [n, real]
  at::Tensor rowMax, lse;                        // [n, 1]
  if (slice.real > 0) {
    rowMax = real.amax(1, true);
    at::Tensor e = real.sub_(rowMax).exp_();  // in place: z's real columns are now e
    lse = rowMax + e.sum(1, true).log_();
  } else {
    lse = at::full({n, 1}, -std::numeric_limits<float>::infinity(), z.options());
  }
  combineOverTp(lse, targetLogit, tp);
  if (probs.defined()) {
    if (slice.real > 0) {
      real.mul_((rowMax - lse).exp_());  // e exp(m - lse) = p
      if (!probs.is_same(z)) probs.narrow(1, 0, slice.real).copy_(real);
    }
    probs.narrow(1, slice.real, slice.width - slice.real).zero_();
    probs.scatter_add_(1, local, outside.logical_not().to(probs.scalar_type()).neg().unsqueeze(1));
  }
  return lse.squeeze(1) - targetLogit;
}

// One group of tokens. With `grads` the group's logits are one product and
// its softmax is kept whole for the gradients' products; without, the
// logits are made and reduced one chunk at a time.
GroupResult runGroup(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                     const at::Tensor& weights, const VocabSlice& slice, bool grads,
                     bool weightGrads, int64_t chunkBytes, Communicator& tp) {
  int64_t tokens = hidden.size(0);
  int64_t chunk = std::max<int64_t>(1, chunkBytes / (slice.width * 4));
  bool lowPrecision = hidden.scalar_type() != at::kFloat;
  at::Tensor weightT = weight.t();
  // The logits, then softmax - onehot, in the product dtype.
  at::Tensor probs;
  if (grads) {
    probs = at::mm(hidden, weightT);  // [tokens, V/tp]
  } else {
    probs = at::empty({std::min(chunk, tokens), slice.width}, hidden.options());
  }
  at::Tensor scratch = lowPrecision
                           ? at::empty({chunk, slice.width}, hidden.options().dtype(at::kFloat))
                           : at::Tensor();
  GroupResult result{at::empty({tokens}, hidden.options().dtype(at::kFloat)), {}, {}};
  for (int64_t start = 0; start < tokens; start += chunk) {
    int64_t n = std::min(chunk, tokens - start);
    at::Tensor part = probs.narrow(0, grads ? start : 0, n);
    if (!grads) at::mm_out(part, hidden.narrow(0, start, n), weightT);  // logits [n, V/tp]
    at::Tensor floats = scratch.defined() ? scratch.narrow(0, 0, n) : at::Tensor();
    result.losses.narrow(0, start, n)
        .copy_(lossesOfChunk(part, grads ? part : at::Tensor(), floats, targets.narrow(0, start, n),
                             slice, tp));
  }
  if (grads) {
    // d(sum_t w_t loss_t)/dz_t = w_t (p_t - onehot(t)).
    if (weights.defined()) probs.mul_(weights.unsqueeze(1).to(probs.scalar_type()));
    result.gradHidden = at::mm(probs, weight);  // [n, H]
    // A frozen head (LoRA's base) takes no gradient: not its product either.
    if (weightGrads) result.gradWeight = at::mm(probs.t(), hidden);  // [V/tp, H]
  }
  return result;
}

// hidden [T, H] and weight [V/tp, H] arrive in the products' dtype; the
// gradients go back in it too, as an autocast product's would.
struct VocabParallelLinearCrossEntropyFunction
    : torch::autograd::Function<VocabParallelLinearCrossEntropyFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& hidden,
                            const at::Tensor& weight, const at::Tensor& targets,
                            const at::Tensor& tokenWeights, int64_t vocab, Communicator* tp,
                            LinearCrossEntropyChunks chunks, bool grads, bool weightGrads) {
    // Empty: no weights (the mean).
    const at::Tensor weights = tokenWeights.numel() > 0 ? tokenWeights : at::Tensor();
    int64_t width = weight.size(0);
    VocabSlice slice{width * tp->rank(), width,
                     std::clamp<int64_t>(vocab - width * tp->rank(), 0, width)};
    int64_t tokens = hidden.size(0);
    at::Tensor losses = at::empty({tokens}, hidden.options().dtype(at::kFloat));
    at::Tensor gradHidden, gradWeight;
    if (grads) gradHidden = at::empty_like(hidden);
    for (int64_t start = 0; start < tokens; start += chunks.groupTokens) {
      int64_t n = std::min(chunks.groupTokens, tokens - start);
      GroupResult group = runGroup(hidden.narrow(0, start, n), weight, targets.narrow(0, start, n),
                                   weights.defined() ? weights.narrow(0, start, n) : at::Tensor(),
                                   slice, grads, weightGrads, chunks.chunkBytes, *tp);
      losses.narrow(0, start, n).copy_(group.losses);
      if (!grads) continue;
      gradHidden.narrow(0, start, n).copy_(group.gradHidden);
      if (!weightGrads) continue;
      // Groups after the first are summed in float32.
      gradWeight = !gradWeight.defined() ? group.gradWeight
                                         : gradWeight.to(at::kFloat).add_(group.gradWeight);
    }
    if (grads) {
      ctx->saved_data["grad_hidden"] = gradHidden;
      ctx->saved_data["grad_weight"] = gradWeight;
      // The weights are in the saved gradients already; the mean's 1/T is not.
      ctx->saved_data["divisor"] = weights.defined() ? int64_t{1} : tokens;
    }
    return weights.defined() ? losses.mul(weights).sum() : losses.mean();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    // d mean / d loss_i = 1 / T (weighted: w_i, applied in forward), times
    // the incoming gradient.
    at::Tensor scale = grads[0].to(at::kFloat) / ctx->saved_data["divisor"].toInt();
    at::Tensor gradHidden = ctx->saved_data["grad_hidden"].toTensor();
    at::Tensor gradWeight = ctx->saved_data["grad_weight"].toTensor();
    // One gradient per forward argument: none for targets, weights, vocab,
    // tp, chunks and the two switches.
    variable_list result(9);
    result[0] = gradHidden * scale;
    if (gradWeight.defined()) result[1] = (gradWeight * scale).to(gradHidden.scalar_type());
    return result;
  }
};

}  // namespace

at::Tensor vocabParallelLinearCrossEntropy(const at::Tensor& hidden, const at::Tensor& weight,
                                           const at::Tensor& targets, int64_t vocab,
                                           Communicator& tp, LinearCrossEntropyChunks chunks,
                                           const at::Tensor& tokenWeights) {
  checkInputs(hidden, weight, targets, vocab, tp);
  if (tokenWeights.defined() &&
      (tokenWeights.dim() != 1 || tokenWeights.size(0) != targets.size(0) ||
       tokenWeights.scalar_type() != at::kFloat))
    throw ConfigError("vocabParallelLinearCrossEntropy: token weights " +
                      c10::str(tokenWeights.sizes()) + " must be float32 [T] for targets " +
                      c10::str(targets.sizes()));
  if (chunks.chunkBytes <= 0 || chunks.groupTokens <= 0)
    throw ConfigError("vocabParallelLinearCrossEntropy: chunk bytes (" +
                      std::to_string(chunks.chunkBytes) + ") and group tokens (" +
                      std::to_string(chunks.groupTokens) + ") must be positive");
  // Inside forward grad mode is off; whether backward will follow is known here.
  bool grads = at::GradMode::is_enabled() && (hidden.requires_grad() || weight.requires_grad());
  bool weightGrads = grads && weight.requires_grad();
  // The products' dtype: autocast's where it is on. The casts stay outside
  // the function, differentiable, and the weight's is autocast's cached one,
  // made once a step rather than once a micro-batch.
  at::DeviceType device = hidden.device().type();
  at::Tensor h = hidden, w = weight;
  if (compat::autocastEnabled(device)) {
    at::ScalarType type = compat::autocastDtype(device);
    h = hidden.to(type);
    w = at::autocast::cached_cast(type, weight, device);
  }
  // An autograd function's tensor arguments must be defined: no weights
  // travel as an empty tensor.
  at::Tensor weights =
      tokenWeights.defined() ? tokenWeights : at::empty({0}, targets.options().dtype(at::kFloat));
  return VocabParallelLinearCrossEntropyFunction::apply(h, w, targets, weights, vocab, &tp, chunks,
                                                        grads, weightGrads);
}

}  // namespace strata::tensor_parallel

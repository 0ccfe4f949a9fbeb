// A GPT-style decoder-only transformer described by its dimensions, and the
// parameter and FLOP counts that follow from them.
//
// Layout per layer: pre-LN attention (fused QKV h->3h, output h->h) and MLP
// (h->ffn->h), biases everywhere, two layer norms; learned position
// embeddings; output logits tied to the token embedding, or a head of their
// own (V x h, no bias) when untied. modelPreset() throws PlanError for an
// unknown name, listing the known ones; validate(), and overrideSizes() that
// calls it, throw PlanError naming every size that is not positive, or the
// heads and hidden size when heads do not divide hidden. Nothing else throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata::plan {

struct ModelDesc {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int ffn = 0;  // MLP inner size, 4 x hidden for GPT
  int vocab = 0;
  int seqLen = 0;
  bool tiedEmbeddings = true;  // the logits reuse the token embedding

  void validate() const;
};

std::vector<std::string> modelPresetNames();
ModelDesc modelPreset(const std::string& name);

// Sizes that replace those of a base model (`strata plan --layers ...`);
// the unset ones keep the base's.
struct ModelOverrides {
  std::optional<int> layers{}, hidden{}, heads{}, ffn{}, vocab{}, seqLen{};
};

// `base` with every set size replaced, then validated (PlanError as from
// validate()). Named after what changed, "gpt2-small with layers 6, hidden
// 512", or base.name when nothing did (a size set to the base's own value
// changes nothing).
ModelDesc overrideSizes(const ModelDesc& base, const ModelOverrides& overrides);

// Parameters of one transformer layer: 4h^2 + 2hf + 9h + f
// (= 12h^2 + 13h for f = 4h).
double layerParameters(const ModelDesc& m);
// Token embedding V*h + positions s*h + final LN 2h.
double embeddingParameters(const ModelDesc& m);
// The logits' own weights: V*h when untied, 0 when tied to the embedding.
double headParameters(const ModelDesc& m);
double parameterCount(const ModelDesc& m);

// Forward FLOPs of one layer for `sequences` sequences (a multiply-add = 2):
//   2*b*s*(4h^2 + 2hf)   QKV, attention output and the two MLP matmuls
// + 4*b*s^2*h            scores Q.K^T and the weighted sum over V
// = 24bsh^2 + 4bs^2h for f = 4h.
double layerForwardFlops(const ModelDesc& m, double sequences);
// The logits matmul: 2*b*s*h*V.
double logitsForwardFlops(const ModelDesc& m, double sequences);

// FLOPs of one training iteration over `sequences` sequences. A backward pass
// costs two forwards, so without recompute every matmul runs 3 times; full
// recompute runs each layer's forward once more (4 passes) but not the logits.
// For f = 4h this is Megatron-LM's (Narayanan et al., SC21, eq. 3):
//   with recompute:    96*B*s*l*h^2 * (1 + s/(6h) + V/(16*l*h))
//   without recompute: 72*B*s*l*h^2 * (1 + s/(6h) + V/(12*l*h))
// The second is the "model FLOPs" of MFU; the first the hardware FLOPs
// Megatron reports as teraFLOP/s when it recomputes.
double trainingFlops(const ModelDesc& m, double sequences, bool recompute);

// The common rule of thumb per trained token: 6N + 12*l*s*h (Kaplan et al.
// 2020, with the attention term), N counting all parameters.
double flopsPerToken6N(const ModelDesc& m);

}  // namespace strata::plan

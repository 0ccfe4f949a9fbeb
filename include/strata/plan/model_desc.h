// A decoder-only transformer described by its family and dimensions, and the
// parameter and FLOP counts that follow from them.
//
// Two families, as `strata train`'s model.architecture names them:
//   - GPT ("strata" and "gpt2", which differ only in GELU's approximation,
//     nothing counted here): pre-LN attention (fused QKV h->3h, output
//     h->h) and MLP (h->ffn->h), biases everywhere, two layer norms; learned
//     position embeddings; a final layer norm. As many key/value heads as
//     heads.
//   - Llama ("llama"): no biases, no position table (RoPE rotates q and k
//     and has no parameters), RMSNorm (one weight vector of h; two per
//     layer and a final one); attention q and o projections h x h, k and v
//     h x kv each with kv = kv heads x head dim (grouped-query attention:
//     each kv head serves heads / kv heads query heads); a SwiGLU MLP of
//     three matrices, gate and up h x ffn and down ffn x h.
// Output logits tied to the token embedding, or a head of their own (V x h,
// no bias) when untied; strata train unties llama's by default.
//
// modelPreset() throws PlanError for an unknown name, listing the known
// ones; familyOf() for an unknown architecture, listing the known ones;
// validate(), and overrideSizes() that calls it, throw PlanError naming
// every size that is not positive, the heads and hidden size when heads do
// not divide hidden, the kv heads and heads when kv heads do not divide
// heads (or are set on a GPT), and llama's head dimension when it is odd
// (RoPE rotates pairs). Nothing else throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata::plan {

enum class Family { kGpt, kLlama };

// strata train's architecture names, each with its family: "gpt2", "llama", "strata".
std::vector<std::string> architectureNames();
Family familyOf(const std::string& architecture);
// strata train's model.tied_embeddings when a config leaves it out: false
// for llama, true for GPT.
bool defaultTiedEmbeddings(Family family);

struct ModelDesc {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int ffn = 0;  // MLP inner size: 4 x hidden for GPT, SwiGLU's gate and up width for llama
  int vocab = 0;
  int seqLen = 0;
  bool tiedEmbeddings = true;  // the logits reuse the token embedding
  Family family = Family::kGpt;
  int kvHeads = 0;  // key/value heads (grouped-query attention); 0: as many as heads

  int keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
  int headDim() const { return hidden / heads; }
  // Width of the k and v projections' outputs: kv heads x head dim.
  double kvWidth() const { return double(keyValueHeads()) * headDim(); }
  void validate() const;
};

std::vector<std::string> modelPresetNames();
ModelDesc modelPreset(const std::string& name);

// Sizes that replace those of a base model (`strata plan --layers ...`);
// the unset ones keep the base's.
struct ModelOverrides {
  std::optional<int> layers{}, hidden{}, heads{}, ffn{}, vocab{}, seqLen{};
  std::optional<std::string> architecture{};  // a name of architectureNames()
  std::optional<int> kvHeads{};
};

// `base` with every set size replaced, then validated (PlanError as from
// validate(), or familyOf() for an unknown architecture). Named after what
// changed, "gpt2-small with layers 6, hidden 512", or base.name when nothing
// did (a size set to the base's own value changes nothing). A new family
// takes its tied_embeddings default, as strata train's config does.
ModelDesc overrideSizes(const ModelDesc& base, const ModelOverrides& overrides);

// Parameters of one transformer layer, kv = kv heads x head dim:
//   GPT:   4h^2 + 2hf + 9h + f   (= 12h^2 + 13h for f = 4h)
//   Llama: 2h^2 + 2h*kv + 3hf + 2h
double layerParameters(const ModelDesc& m);
// The k and v projections' weights of one layer: 2*h*kv.
double kvProjectionParameters(const ModelDesc& m);
// Whether `tp` ranks replicate the k and v projections instead of splitting
// them: when tp is a multiple of the kv heads rather than a divisor, every
// rank holds both whole (computing the one kv head its query heads read) and
// their gradients are all-reduced over tp. Only llama's GQA can; a GPT's tp
// divides its heads.
bool kvReplicated(const ModelDesc& m, int tp);
// The k and v columns (output features of each projection) a tp rank
// computes: kv / tp, or one kv head's d when they are replicated.
double kvColumnsPerRank(const ModelDesc& m, int tp);
// Parameters of one layer a tp rank holds beyond its 1/tp share: the
// replicated k and v projections' other (1 - 1/tp), else 0.
double kvReplicaParameters(const ModelDesc& m, int tp);
// GPT: token embedding V*h + positions s*h + final LN 2h.
// Llama: token embedding V*h + final RMSNorm h.
double embeddingParameters(const ModelDesc& m);
// The logits' own weights: V*h when untied, 0 when tied to the embedding.
double headParameters(const ModelDesc& m);
double parameterCount(const ModelDesc& m);

// Forward FLOPs of one layer for `sequences` sequences (a multiply-add = 2):
//   2*b*s*(2h^2 + 2h*kv)  q and o projections (h x h), k and v (h x kv)
// + 2*b*s*2hf             GPT's two MLP matmuls, or
//   2*b*s*3hf             llama's three (gate, up, down)
// + 4*b*s^2*h             scores Q.K^T and the weighted sum over V: every
//                         query head's, so heads x head dim = h, whatever kv
// = 24bsh^2 + 4bs^2h for GPT with f = 4h.
double layerForwardFlops(const ModelDesc& m, double sequences);
// The forward FLOPs one of `tp` ranks does in one layer: layerForwardFlops /
// tp, except that replicated k and v projections (kvReplicated) compute one
// kv head per rank, 2*2*b*s*h*d with d the head dim, instead of a 1/tp share.
double tpRankLayerForwardFlops(const ModelDesc& m, double sequences, int tp);
// The logits matmul: 2*b*s*h*V.
double logitsForwardFlops(const ModelDesc& m, double sequences);

// FLOPs of one training iteration over `sequences` sequences. A backward pass
// costs two forwards, so without recompute every matmul runs 3 times; full
// recompute runs each layer's forward once more (4 passes) but not the logits.
// For a GPT with f = 4h this is Megatron-LM's (Narayanan et al., SC21, eq. 3):
//   with recompute:    96*B*s*l*h^2 * (1 + s/(6h) + V/(16*l*h))
//   without recompute: 72*B*s*l*h^2 * (1 + s/(6h) + V/(12*l*h))
// The second is the "model FLOPs" of MFU; the first the hardware FLOPs
// Megatron reports as teraFLOP/s when it recomputes.
double trainingFlops(const ModelDesc& m, double sequences, bool recompute);

// The common rule of thumb per trained token: 6N + 12*l*s*h (Kaplan et al.
// 2020, with the attention term), N counting all parameters.
double flopsPerToken6N(const ModelDesc& m);

}  // namespace strata::plan

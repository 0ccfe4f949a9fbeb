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
// A model of either family may have mixture-of-experts layers (strata train's [model.moe],
// expert_parallel/moe_options.h): layer i (from 0) is MoE when (i + 1) %
// every == 0, its MLP then a router (E x h, no bias) choosing each token's
// top_k of E routed experts, each a SwiGLU of width expert_ffn (gate and up
// h x ef, down ef x h), plus shared_experts always-active ones run as one
// SwiGLU of width shared x ef. parameterCount() counts every expert;
// activeParameterCount() and the FLOPs only those a token runs through
// (top_k routed and the shared), with the router.
//
// modelPreset() throws PlanError for an unknown name, listing the known
// ones; familyOf() for an unknown architecture, listing the known ones;
// validate(), and overrideSizes() that calls it, throw PlanError naming
// every size that is not positive, the heads and hidden size when heads do
// not divide hidden, the kv heads and heads when kv heads do not divide
// heads (or are set on a GPT), llama's head dimension when it is odd (RoPE
// rotates pairs), and an MoE shape strata train refuses (experts on a GPT,
// negative experts, top_k outside 1..experts, expert_ffn or every below 1,
// negative shared experts), and LoRA where strata train refuses it (on a
// GPT, a rank below 1, no targets, MLP targets on an MoE model), naming
// the values. Nothing else throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata::plan {

enum class Family { kGpt, kLlama };

// Whether a layer's MLP is the dense one or a mixture of experts.
enum class LayerKind { kDense, kMoe };

// The mixture-of-experts layers of a model ([model.moe]; the training-only
// terms, aux and z-loss coefficients, capacity factor and top_k
// normalisation, change no count and are not held).
struct MoeDesc {
  int experts = 0;        // routed experts of an MoE MLP; 0: a dense model
  int topK = 2;           // routed experts each token runs through
  int expertFfn = 0;      // each expert's SwiGLU inner width
  int sharedExperts = 0;  // always-active experts, one SwiGLU of sharedExperts x expertFfn
  int every = 1;          // layer i (from 0) is MoE when (i + 1) % every == 0

  bool enabled() const { return experts > 0; }
  bool isMoeLayer(int index) const { return enabled() && (index + 1) % every == 0; }
};

// The projections of a llama layer that LoRA adapters can sit on
// (strata train's finetune.targets).
enum class LoraTarget { kQ, kK, kV, kO, kGate, kUp, kDown };

// LoRA adapters on a frozen base ([finetune] method = "lora",
// tensor_parallel/lora.h): each target W (out x in) gains A (r x in) and B
// (out x r); only they train. Column-parallel targets (q, k, v, gate, up)
// split B's rows over tp and keep A whole, row-parallel ones (o, down)
// split A's columns and keep B whole; replicated k and v keep both whole.
struct LoraDesc {
  bool enabled = false;  // strata train's finetune.method = "lora"
  int rank = 8;          // r
  std::vector<LoraTarget> targets{LoraTarget::kQ, LoraTarget::kV};
  // finetune.dropout > 0: each adapter keeps its own masked input and mask
  // in place of the input the adapters share.
  bool dropout = false;
  // finetune.base_dtype = "bf16": the frozen projection weights (all of a
  // layer's but its norms and router) kept in 2 bytes.
  bool bf16Base = false;

  bool adapts(LoraTarget target) const;
};

// strata train's names of the targets, "q" .. "down"; loraTargetOf() throws
// PlanError for another name, listing them.
std::vector<std::string> loraTargetNames();
LoraTarget loraTargetOf(const std::string& name);

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
  MoeDesc moe{};    // mixture-of-experts layers, either family
  // A GPT trains with dropout (a rate above 0), whose masks its layers keep
  // for the backward (memory.h); strata train's default rate, 0, keeps none.
  // The llama family has no dropout.
  bool dropout = true;
  // Trained as LoRA adapters on a frozen base (llama only): the base keeps
  // its weights alone, no gradients or optimizer state (memory.h).
  LoraDesc lora{};

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
  // [model.moe]'s experts, top_k, expert_ffn, shared_experts and every.
  std::optional<int> experts{}, topK{}, expertFfn{}, sharedExperts{}, moeEvery{};
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
// and of an MoE layer (`kind` kMoe), E experts of width ef, S shared:
//   Llama: 2h^2 + 2h*kv + 2h + E*h + 3h*ef*(E + S)
double layerParameters(const ModelDesc& m, LayerKind kind = LayerKind::kDense);
// The MoE layers among the model's: layers i (from 0) with (i + 1) % every
// == 0, so layers / every of them; 0 for a dense model.
int moeLayerCount(const ModelDesc& m);
// Of the `count` layers from layer `first`, how many are MoE.
int moeLayersIn(const ModelDesc& m, int first, int count);
// One routed expert's weights: gate, up and down, 3*h*ef.
double expertParameters(const ModelDesc& m);
// The router's weight, E*h: whole on every tp rank (each routes the same tokens).
double routerParameters(const ModelDesc& m);
// What one rank of `tp` and `ep` holds of one layer: a 1/tp share of its
// matrices but the router's (whole), the norms and row-parallel biases
// whole (tpReplicatedLayerParameters), the replicated k and v projections'
// other (1 - 1/tp) (kvReplicaParameters), and of an MoE layer's experts its
// E/ep, each split over tp (tpRankExpertParameters).
double tpRankLayerParameters(const ModelDesc& m, LayerKind kind, int tp, int ep);
// The routed experts' weights of one MoE layer on a rank: E/ep experts,
// 3*h*ef/tp each. They are replicated over dp x cp / ep ranks, where the
// rest of the layer is over dp x cp.
double tpRankExpertParameters(const ModelDesc& m, int tp, int ep);
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
// Of those, the final norm's (GPT's LayerNorm 2h, llama's RMSNorm h): the
// trainer runs it with the head, on the last stage.
double finalNormParameters(const ModelDesc& m);
// The parameters of one dense layer that every tensor-parallel rank holds
// whole: the norms' (GPT's two LayerNorms 4h, llama's two RMSNorms 2h) and
// GPT's row-parallel biases (the attention output's and fc2's, 2h), which
// are added after the all-reduce.
double tpReplicatedLayerParameters(const ModelDesc& m);
// The word embedding's rows: the vocabulary padded to a multiple of tp, as
// the trainer pads it (models/gpt.h), so that every tp rank holds V_p / tp.
double paddedVocab(const ModelDesc& m, int tp);
// The logits' own weights: V*h when untied, 0 when tied to the embedding.
double headParameters(const ModelDesc& m);
// Every parameter, every expert of every MoE layer counted.
double parameterCount(const ModelDesc& m);
// The parameters one token's forward runs through: parameterCount with each
// MoE layer's E routed experts replaced by its top_k (Mixtral 8x7B's "12.9B
// active" of 46.7B). Equal to parameterCount for a dense model.
double activeParameterCount(const ModelDesc& m);

// Forward FLOPs of one layer for `sequences` sequences (a multiply-add = 2):
//   2*b*s*(2h^2 + 2h*kv)  q and o projections (h x h), k and v (h x kv)
// + 2*b*s*2hf             GPT's two MLP matmuls, or
//   2*b*s*3hf             llama's three (gate, up, down)
// + 4*b*s^2*h             scores Q.K^T and the weighted sum over V: every
//                         query head's, so heads x head dim = h, whatever kv
// = 24bsh^2 + 4bs^2h for GPT with f = 4h.
// An MoE layer's MLP instead runs the router and each token's top_k routed
// experts and the shared ones:
//   2*b*s*(E*h + 3h*ef*(k + S))
double layerForwardFlops(const ModelDesc& m, double sequences, LayerKind kind = LayerKind::kDense);
// The forward FLOPs one of `tp` ranks does in one layer: layerForwardFlops /
// tp, except that replicated k and v projections (kvReplicated) compute one
// kv head per rank, 2*2*b*s*h*d with d the head dim, instead of a 1/tp share,
// and that every tp rank routes its tokens whole (2*b*s*h*E). Under ep a rank
// computes its E/ep experts on the rows the whole ep group sends them: with
// balanced routing, top_k rows per token of its own, so ep changes nothing.
double tpRankLayerForwardFlops(const ModelDesc& m, double sequences, int tp,
                               LayerKind kind = LayerKind::kDense);
// LoRA's adapters of one layer of `kind` that a rank of `tp` (and `ep`)
// holds, r a target: column-parallel r*in + r*out/t, row-parallel
// r*in/t + r*out, replicated k or v r*(h + kv); 0 without LoRA. On an MoE
// layer gate, up and down are adapted on each of the rank's E/ep experts
// (at expert_ffn) and on the shared experts' SwiGLU.
double loraLayerParameters(const ModelDesc& m, int tp, LayerKind kind = LayerKind::kDense,
                           int ep = 1);
// Every adapter of the model, whole.
double loraParameters(const ModelDesc& m);
// The adapters' forward FLOPs on one of `tp` ranks in one layer, a token
// 2*r per element of A and B it multiplies by: column-parallel
// 2r(in + out/t) (each rank projects through the whole A), row-parallel
// 2r(in/t + out) (each its partial product through the whole B), replicated
// k or v 2r(h + d) (its kv head's rows of B); on an MoE layer a token's
// top_k experts' MLP adapters and the shared experts'.
double loraLayerForwardFlops(const ModelDesc& m, double sequences, int tp,
                             LayerKind kind = LayerKind::kDense);
// The output features of a layer's adapted projections on a tp rank, a
// token: out/t for a column-parallel target, out for a row-parallel one (its
// partial product), one kv head's d for a replicated k or v (an MoE layer's
// MLP targets for each expert a token runs).
double loraLayerOutputColumns(const ModelDesc& m, int tp, LayerKind kind = LayerKind::kDense);
// The largest A or B of the model, whole: r x max(h, ffn) at most.
double largestAdapterElements(const ModelDesc& m);
// The forward FLOPs of one layer's weight matmuls on a tp rank: what a
// frozen base's backward does not do again for its weights' gradients
// (tpRankLayerForwardFlops without the attention products).
double tpRankWeightMatmulFlops(const ModelDesc& m, double sequences, int tp, LayerKind kind);

// The logits matmul: 2*b*s*h*V.
double logitsForwardFlops(const ModelDesc& m, double sequences);

// FLOPs of one training iteration over `sequences` sequences. A backward pass
// costs two forwards, so without recompute every matmul runs 3 times; full
// recompute runs each layer's forward once more (4 passes) but not the logits.
// For a GPT with f = 4h this is Megatron-LM's (Narayanan et al., SC21, eq. 3):
//   with recompute:    96*B*s*l*h^2 * (1 + s/(6h) + V/(16*l*h))
//   without recompute: 72*B*s*l*h^2 * (1 + s/(6h) + V/(12*l*h))
// The second is the "model FLOPs" of MFU; the first the hardware FLOPs
// Megatron reports as teraFLOP/s when it recomputes. MoE layers count their
// active FLOPs (layerForwardFlops of kMoe). Under LoRA the frozen base
// makes no weight gradients: its layers' weight matmuls and the logits run
// one pass less, and the adapters' FLOPs run every pass, as a trained
// weight's.
double trainingFlops(const ModelDesc& m, double sequences, bool recompute);

// The common rule of thumb per trained token: 6N + 12*l*s*h (Kaplan et al.
// 2020, with the attention term), N the active parameters (every parameter
// of a dense model).
double flopsPerToken6N(const ModelDesc& m);

}  // namespace strata::plan

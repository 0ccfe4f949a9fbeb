#include "strata/plan/model_desc.h"

#include <cmath>
#include <map>
#include <utility>

#include "lora_desc.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

ModelDesc gpt(const std::string& name, int layers, int hidden, int heads, int vocab, int seqLen) {
  return {name, layers, hidden, heads, 4 * hidden, vocab, seqLen};
}

ModelDesc llama(const std::string& name, int layers, int hidden, int heads, int kvHeads, int ffn,
                int vocab, int seqLen) {
  return {name, layers, hidden, heads, ffn, vocab, seqLen, false, Family::kLlama, kvHeads};
}

// A llama whose every layer is MoE, `experts` of width `ffn`, each token
// routed to `topK` of them.
ModelDesc mixture(const std::string& name, int layers, int hidden, int heads, int kvHeads, int ffn,
                  int experts, int topK, int vocab, int seqLen) {
  ModelDesc m = llama(name, layers, hidden, heads, kvHeads, ffn, vocab, seqLen);
  m.moe = {experts, topK, ffn};
  return m;
}

// strata train's architecture names and the family of each.
const std::map<std::string, Family>& architectures() {
  static const std::map<std::string, Family> table = {
      {"gpt2", Family::kGpt}, {"llama", Family::kLlama}, {"strata", Family::kGpt}};
  return table;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

std::string str(int value) { return std::to_string(value); }

void validateKvHeads(const ModelDesc& m) {
  const std::string& name = m.name;
  int kvHeads = m.kvHeads, heads = m.heads;
  if (kvHeads < 0)
    throw PlanError("model '" + name + "': kv-heads " + str(kvHeads) +
                    " is negative (0 means as many as the heads)");
  if (heads % m.keyValueHeads() != 0)
    throw PlanError("model '" + name + "': kv-heads " + str(kvHeads) + " do not divide the " +
                    str(heads) + " heads");
  // The GPT families' fused QKV projection has as many kv heads as heads.
  if (m.family == Family::kGpt && m.keyValueHeads() != heads)
    throw PlanError("model '" + name + "': kv-heads " + str(kvHeads) + " differ from the " +
                    str(heads) + " heads, which only architecture llama allows");
}

// The [model.moe] shapes strata train refuses (expert_parallel's checkMoe
// and validate_config's family rule), named by their keys. The layout's
// rules (tp, ep) are checkLayout's.
void validateMoe(const ModelDesc& m) {
  const MoeDesc& moe = m.moe;
  std::string where = "model '" + m.name + "': moe ";
  if (moe.experts < 0)
    throw PlanError(where + "experts " + str(moe.experts) + " is negative (0: a dense model)");
  if (!moe.enabled()) return;
  if (m.family != Family::kLlama)
    throw PlanError(where + "experts " + str(moe.experts) +
                    " on a GPT: only architecture llama has mixture-of-experts layers");
  if (moe.topK < 1 || moe.topK > moe.experts)
    throw PlanError(where + "top_k " + str(moe.topK) + " is not between 1 and the " +
                    str(moe.experts) + " experts");
  if (moe.expertFfn < 1 || moe.every < 1)
    throw PlanError(where + "expert_ffn " + str(moe.expertFfn) + " and every " + str(moe.every) +
                    " must both be at least 1");
  if (moe.sharedExperts < 0)
    throw PlanError(where + "shared_experts " + str(moe.sharedExperts) + " is negative");
}

// GPT-2 (Radford et al. 2019, Table 2; sizes as released): vocabulary 50257,
// context 1024. GPT-3 (Brown et al. 2020, Table 2.1): context 2048, same
// vocabulary; the table's 13B d_model 5140 and 1.3B's 24 heads are
// inconsistent with its d_head 128, so the shapes below use hidden = heads x
// 128 as the released implementations do. Megatron-LM (Narayanan et al. SC21,
// Table 1): vocabulary 51200, sequence 2048. Llama 2 7B (Touvron et al.
// 2023): multi-head, ffn 11008, vocabulary 32000, context 4096. Llama 3 ("The
// Llama 3 Herd of Models", 2024, Table 3): 8 kv heads; the vocabulary 128256
// (the table's "128K") and context 8192 are the released models'. Mixtral
// 8x7B (Jiang et al. 2024, "Mixtral of Experts", Table 1): Mistral 7B's
// attention, every layer 8 experts of width 14336, top 2, vocabulary 32000,
// context 32768; its dense ffn is the experts' width.
const std::map<std::string, ModelDesc>& modelPresets() {
  static const std::map<std::string, ModelDesc> table = {
      {"gpt2-small", gpt("gpt2-small", 12, 768, 12, 50257, 1024)},
      {"gpt2-medium", gpt("gpt2-medium", 24, 1024, 16, 50257, 1024)},
      {"gpt2-large", gpt("gpt2-large", 36, 1280, 20, 50257, 1024)},
      {"gpt2-xl", gpt("gpt2-xl", 48, 1600, 25, 50257, 1024)},
      {"gpt3-1.3b", gpt("gpt3-1.3b", 24, 2048, 16, 50257, 2048)},
      {"gpt3-6.7b", gpt("gpt3-6.7b", 32, 4096, 32, 50257, 2048)},
      {"gpt3-13b", gpt("gpt3-13b", 40, 5120, 40, 50257, 2048)},
      {"gpt3-175b", gpt("gpt3-175b", 96, 12288, 96, 50257, 2048)},
      {"megatron-1.7b", gpt("megatron-1.7b", 24, 2304, 24, 51200, 2048)},
      {"megatron-3.6b", gpt("megatron-3.6b", 30, 3072, 32, 51200, 2048)},
      {"megatron-7.5b", gpt("megatron-7.5b", 36, 4096, 32, 51200, 2048)},
      {"megatron-18.4b", gpt("megatron-18.4b", 40, 6144, 48, 51200, 2048)},
      {"megatron-39.1b", gpt("megatron-39.1b", 48, 8192, 64, 51200, 2048)},
      {"megatron-76.1b", gpt("megatron-76.1b", 60, 10240, 80, 51200, 2048)},
      {"megatron-145.6b", gpt("megatron-145.6b", 80, 12288, 96, 51200, 2048)},
      {"megatron-310.1b", gpt("megatron-310.1b", 96, 16384, 128, 51200, 2048)},
      {"megatron-529.6b", gpt("megatron-529.6b", 105, 20480, 128, 51200, 2048)},
      {"megatron-1t", gpt("megatron-1t", 128, 25600, 160, 51200, 2048)},
      {"llama2-7b", llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096)},
      {"llama3-8b", llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192)},
      {"llama3-70b", llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192)},
      {"mixtral-8x7b", mixture("mixtral-8x7b", 32, 4096, 32, 8, 14336, 8, 2, 32000, 32768)},
  };
  return table;
}

}  // namespace

std::vector<std::string> architectureNames() {
  std::vector<std::string> names;
  for (const auto& entry : architectures()) names.push_back(entry.first);
  return names;
}

Family familyOf(const std::string& architecture) {
  auto it = architectures().find(architecture);
  if (it == architectures().end())
    throw PlanError("unknown architecture '" + architecture +
                    "'; known architectures: " + joined(architectureNames()));
  return it->second;
}

bool defaultTiedEmbeddings(Family family) { return family != Family::kLlama; }

void ModelDesc::validate() const {
  std::string nonPositive;
  for (auto [size, value] : {std::pair{"layers", layers},
                             {"hidden", hidden},
                             {"heads", heads},
                             {"ffn", ffn},
                             {"vocab", vocab},
                             {"seq-len", seqLen}}) {
    if (value < 1)
      nonPositive +=
          (nonPositive.empty() ? "" : ", ") + std::string(size) + " " + std::to_string(value);
  }
  if (!nonPositive.empty())
    throw PlanError("model '" + name + "' needs positive sizes, got " + nonPositive);
  if (hidden % heads != 0)
    throw PlanError("model '" + name + "': " + str(heads) + " heads do not divide hidden size " +
                    str(hidden));
  validateKvHeads(*this);
  if (family == Family::kLlama && headDim() % 2 != 0)
    throw PlanError("model '" + name + "': llama's rotary embeddings rotate pairs, but hidden " +
                    str(hidden) + " / " + str(heads) + " heads = head dim " + str(headDim()) +
                    " is odd");
  validateMoe(*this);
  validateLora(*this);
}

std::vector<std::string> modelPresetNames() {
  std::vector<std::string> names;
  for (const auto& entry : modelPresets()) names.push_back(entry.first);
  return names;
}

ModelDesc modelPreset(const std::string& name) {
  auto it = modelPresets().find(name);
  if (it == modelPresets().end())
    throw PlanError("unknown model preset '" + name +
                    "'; known presets: " + joined(modelPresetNames()));
  return it->second;
}

ModelDesc overrideSizes(const ModelDesc& base, const ModelOverrides& overrides) {
  ModelDesc model = base;
  std::string changes;
  auto apply = [&](const char* size, const std::optional<int>& value, int& field) {
    if (!value || *value == field) return;
    field = *value;
    changes +=
        (changes.empty() ? " with " : ", ") + std::string(size) + " " + std::to_string(*value);
  };
  apply("layers", overrides.layers, model.layers);
  apply("hidden", overrides.hidden, model.hidden);
  apply("heads", overrides.heads, model.heads);
  apply("ffn", overrides.ffn, model.ffn);
  apply("vocab", overrides.vocab, model.vocab);
  apply("seq-len", overrides.seqLen, model.seqLen);
  apply("kv-heads", overrides.kvHeads, model.kvHeads);
  apply("moe-experts", overrides.experts, model.moe.experts);
  apply("moe-top-k", overrides.topK, model.moe.topK);
  apply("moe-expert-ffn", overrides.expertFfn, model.moe.expertFfn);
  apply("moe-shared-experts", overrides.sharedExperts, model.moe.sharedExperts);
  apply("moe-every", overrides.moeEvery, model.moe.every);
  if (overrides.architecture) {
    Family family = familyOf(*overrides.architecture);
    if (family != model.family) {
      model.family = family;
      model.tiedEmbeddings = defaultTiedEmbeddings(family);
      changes += (changes.empty() ? " with " : ", ") + std::string("architecture ") +
                 *overrides.architecture;
    }
  }
  model.name += changes;
  model.validate();
  return model;
}

namespace {

// A SwiGLU MLP's weights at inner width `ffn`: gate, up, down.
double swigluParameters(const ModelDesc& m, double ffn) { return 3.0 * m.hidden * ffn; }

// What every MoE token runs through besides its routed experts: the
// router and the shared experts' SwiGLU.
double alwaysActiveMoeParameters(const ModelDesc& m) {
  return routerParameters(m) + swigluParameters(m, double(m.moe.sharedExperts) * m.moe.expertFfn);
}

// An MoE layer with `routed` of its experts: the dense layer's parameters
// with its SwiGLU replaced.
double moeLayerParameters(const ModelDesc& m, double routed) {
  return layerParameters(m) - swigluParameters(m, m.ffn) + alwaysActiveMoeParameters(m) +
         routed * expertParameters(m);
}

}  // namespace

double layerParameters(const ModelDesc& m, LayerKind kind) {
  if (kind == LayerKind::kMoe) return moeLayerParameters(m, m.moe.experts);
  double h = m.hidden, f = m.ffn;
  if (m.family == Family::kGpt) return 4 * h * h + 2 * h * f + 9 * h + f;
  double attention = 2 * h * h + kvProjectionParameters(m);  // q, o; k, v
  double mlp = swigluParameters(m, f);                       // gate, up, down
  double norms = 2 * h;                                      // before attention, before MLP
  return attention + mlp + norms;
}

int moeLayerCount(const ModelDesc& m) { return moeLayersIn(m, 0, m.layers); }

// Layers i < n with (i + 1) % every == 0 number n / every.
int moeLayersIn(const ModelDesc& m, int first, int count) {
  if (!m.moe.enabled()) return 0;
  return (first + count) / m.moe.every - first / m.moe.every;
}

double expertParameters(const ModelDesc& m) { return swigluParameters(m, m.moe.expertFfn); }

double routerParameters(const ModelDesc& m) { return double(m.moe.experts) * m.hidden; }

double tpRankExpertParameters(const ModelDesc& m, int tp, int ep) {
  return double(m.moe.experts / ep) * expertParameters(m) / tp;
}

double tpRankLayerParameters(const ModelDesc& m, LayerKind kind, int tp, int ep) {
  double whole = tpReplicatedLayerParameters(m);
  double replicated = whole + kvReplicaParameters(m, tp);
  if (kind == LayerKind::kDense) return (layerParameters(m) - whole) / tp + replicated;
  double experts = double(m.moe.experts) * expertParameters(m);
  double split = layerParameters(m, kind) - experts - routerParameters(m) - whole;
  return split / tp + routerParameters(m) + replicated + tpRankExpertParameters(m, tp, ep);
}

double tpReplicatedLayerParameters(const ModelDesc& m) {
  return m.family == Family::kLlama ? 2.0 * m.hidden : 6.0 * m.hidden;
}

double kvProjectionParameters(const ModelDesc& m) { return 2.0 * m.hidden * m.kvWidth(); }

bool kvReplicated(const ModelDesc& m, int tp) { return m.keyValueHeads() % tp != 0; }

double kvColumnsPerRank(const ModelDesc& m, int tp) {
  return kvReplicated(m, tp) ? m.headDim() : m.kvWidth() / tp;
}

double kvReplicaParameters(const ModelDesc& m, int tp) {
  return kvReplicated(m, tp) ? kvProjectionParameters(m) * (1 - 1.0 / tp) : 0;
}

double embeddingParameters(const ModelDesc& m) {
  double h = m.hidden;
  double tokens = double(m.vocab) * h;
  if (m.family == Family::kLlama) return tokens + h;  // RoPE has no table; one final RMSNorm
  return tokens + double(m.seqLen) * h + 2 * h;
}

double finalNormParameters(const ModelDesc& m) {
  return m.family == Family::kLlama ? m.hidden : 2.0 * m.hidden;
}

double paddedVocab(const ModelDesc& m, int tp) { return std::ceil(double(m.vocab) / tp) * tp; }

double headParameters(const ModelDesc& m) {
  return m.tiedEmbeddings ? 0 : double(m.vocab) * m.hidden;
}

namespace {

// The layers' parameters, an MoE layer's with `routed` of its experts.
double layersParameters(const ModelDesc& m, double routed) {
  int moe = moeLayerCount(m);
  return (m.layers - moe) * layerParameters(m) + moe * moeLayerParameters(m, routed);
}

}  // namespace

double parameterCount(const ModelDesc& m) {
  return layersParameters(m, m.moe.experts) + embeddingParameters(m) + headParameters(m);
}

double activeParameterCount(const ModelDesc& m) {
  return layersParameters(m, m.moe.topK) + embeddingParameters(m) + headParameters(m);
}

double layerForwardFlops(const ModelDesc& m, double sequences, LayerKind kind) {
  double b = sequences, s = m.seqLen, h = m.hidden, f = m.ffn;
  double projections = 2 * h * h + kvProjectionParameters(m);
  double mlpMatrices = m.family == Family::kLlama ? 3 : 2;
  // A matmul's forward is 2 FLOPs per weight per token; an MoE MLP's
  // tokens run the router, the shared experts and top_k routed ones.
  double mlp = kind == LayerKind::kDense
                   ? mlpMatrices * h * f
                   : alwaysActiveMoeParameters(m) + m.moe.topK * expertParameters(m);
  return 2 * b * s * (projections + mlp) + 4 * b * s * s * h;
}

double tpRankLayerForwardFlops(const ModelDesc& m, double sequences, int tp, LayerKind kind) {
  double whole = layerForwardFlops(m, sequences, kind);
  double tokens = sequences * m.seqLen;
  // Every tp rank routes the same tokens with the whole router.
  double router = kind == LayerKind::kMoe ? 2 * tokens * routerParameters(m) : 0;
  if (!kvReplicated(m, tp)) return (whole - router) / tp + router;
  double kv = 2 * tokens * kvProjectionParameters(m);
  double oneKvHead = 2 * 2 * tokens * m.hidden * m.headDim();  // k and v of one kv head
  return (whole - kv - router) / tp + oneKvHead + router;
}

double logitsForwardFlops(const ModelDesc& m, double sequences) {
  return 2 * sequences * m.seqLen * double(m.hidden) * m.vocab;
}

double trainingFlops(const ModelDesc& m, double sequences, bool recompute) {
  int moe = moeLayerCount(m);
  double layers = (m.layers - moe) * layerForwardFlops(m, sequences) +
                  moe * layerForwardFlops(m, sequences, LayerKind::kMoe);
  double passes = recompute ? 4 : 3;
  double logits = logitsForwardFlops(m, sequences);
  if (!m.lora.enabled) return passes * layers + 3 * logits;
  double weightMatmuls =
      (m.layers - moe) * tpRankWeightMatmulFlops(m, sequences, 1, LayerKind::kDense) +
      moe * tpRankWeightMatmulFlops(m, sequences, 1, LayerKind::kMoe);
  double adapters = (m.layers - moe) * loraLayerForwardFlops(m, sequences, 1) +
                    moe * loraLayerForwardFlops(m, sequences, 1, LayerKind::kMoe);
  return passes * (layers + adapters) - weightMatmuls + 2 * logits;
}

double flopsPerToken6N(const ModelDesc& m) {
  return 6 * activeParameterCount(m) + 12.0 * m.layers * m.seqLen * double(m.hidden);
}

}  // namespace strata::plan

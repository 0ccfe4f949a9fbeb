#include "llama_hugging_face.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "strata/error.h"

namespace strata::models {

LlamaHuggingFace::LlamaHuggingFace(LlamaConfig config) : config_(std::move(config)) {
  const expert_parallel::MoeOptions& m = config_.moe;
  if (!m.enabled()) return;
  auto refuse = [](const std::string& setting) {
    throw ConfigError("Mixtral's Hugging Face format (MixtralForCausalLM) cannot hold " + setting +
                      ": it has a mixture of experts in every layer, no shared experts and "
                      "renormalised top-k gates");
  };
  if (m.every != 1) refuse("model.moe.every = " + std::to_string(m.every));
  if (m.sharedExperts != 0) refuse("model.moe.shared_experts = " + std::to_string(m.sharedExperts));
  if (!m.normalizeTopK) refuse("model.moe.normalize_top_k = false");
}

// A block's MLP: Llama's three projections, or Mixtral's router and experts.
std::vector<HuggingFaceTensor> LlamaHuggingFace::mlpTensors(const std::string& ours,
                                                            const std::string& theirs) const {
  const LlamaConfig& c = config_;
  int64_t h = c.hidden;
  if (!c.moe.enabled())
    return {{ours + "mlp.gate.weight", theirs + "mlp.gate_proj.weight", {c.ffn, h}},
            {ours + "mlp.up.weight", theirs + "mlp.up_proj.weight", {c.ffn, h}},
            {ours + "mlp.down.weight", theirs + "mlp.down_proj.weight", {h, c.ffn}}};
  int64_t ffn = c.moe.expertFfn;
  std::vector<HuggingFaceTensor> all = {
      {ours + "mlp.router.weight", theirs + "block_sparse_moe.gate.weight", {c.moe.experts, h}}};
  for (int64_t j = 0; j < c.moe.experts; ++j) {
    std::string e = ours + "mlp.experts." + std::to_string(j) + ".";
    std::string w = theirs + "block_sparse_moe.experts." + std::to_string(j) + ".";
    all.push_back({e + "gate.weight", w + "w1.weight", {ffn, h}});
    all.push_back({e + "down.weight", w + "w2.weight", {h, ffn}});
    all.push_back({e + "up.weight", w + "w3.weight", {ffn, h}});
  }
  return all;
}

std::vector<HuggingFaceTensor> LlamaHuggingFace::tensors() const {
  const LlamaConfig& c = config_;
  int64_t h = c.hidden, q = c.heads * (h / c.heads), kv = c.kvHeads * (h / c.heads);
  std::vector<HuggingFaceTensor> all = {
      {"embedding.tokens.weight", "model.embed_tokens.weight", {c.vocab, h}}};
  struct Weight {
    const char *ours, *theirs;
    std::vector<int64_t> shape;
  };
  const std::vector<Weight> block = {
      {"attention_norm", "input_layernorm", {h}},   {"attention.q", "self_attn.q_proj", {q, h}},
      {"attention.k", "self_attn.k_proj", {kv, h}}, {"attention.v", "self_attn.v_proj", {kv, h}},
      {"attention.o", "self_attn.o_proj", {h, q}},  {"mlp_norm", "post_attention_layernorm", {h}}};
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string ours = "block" + std::to_string(i) + ".";
    std::string theirs = "model.layers." + std::to_string(i) + ".";
    for (const Weight& w : block)
      all.push_back({ours + w.ours + ".weight", theirs + w.theirs + ".weight", w.shape});
    for (HuggingFaceTensor& t : mlpTensors(ours, theirs)) all.push_back(std::move(t));
  }
  all.push_back({"head.norm.weight", "model.norm.weight", {h}});
  if (!c.tiedEmbeddings) all.push_back({"head.lm_head.weight", "lm_head.weight", {c.vocab, h}});
  return all;
}

// A tied model's file may still hold lm_head.weight (a copy of the
// embedding); transformers before 4.38 saved each layer's rotary inv_freq.
bool LlamaHuggingFace::ignorable(const std::string& name) const {
  const std::string rotary = ".self_attn.rotary_emb.inv_freq";
  bool rotaryBuffer = name.size() > rotary.size() &&
                      name.compare(name.size() - rotary.size(), rotary.size(), rotary) == 0;
  return rotaryBuffer || (config_.tiedEmbeddings && name == "lm_head.weight");
}

at::Tensor LlamaHuggingFace::toHuggingFace(const std::string&, const at::Tensor& whole) const {
  return whole.contiguous();
}

at::Tensor LlamaHuggingFace::blockOf(const std::string&, const at::Tensor& t,
                                     const std::vector<int64_t>& offset,
                                     const std::vector<int64_t>& length) const {
  return narrowedBlock(t, offset, length);
}

// The fields transformers' LlamaConfig (or MixtralConfig) reads.
std::string LlamaHuggingFace::configJson() const {
  const LlamaConfig& m = config_;
  bool mixtral = m.moe.enabled();
  nlohmann::ordered_json c;
  c["architectures"] = {architecture()};
  c["model_type"] = mixtral ? "mixtral" : "llama";
  c["vocab_size"] = m.vocab;
  c["hidden_size"] = m.hidden;
  c["intermediate_size"] = mixtral ? m.moe.expertFfn : m.ffn;
  if (mixtral) {
    c["num_local_experts"] = m.moe.experts;
    c["num_experts_per_tok"] = m.moe.topK;
    c["router_aux_loss_coef"] = m.moe.auxLossCoeff;
    c["output_router_logits"] = false;
    c["sliding_window"] = nullptr;
  }
  c["num_hidden_layers"] = m.layers;
  c["num_attention_heads"] = m.heads;
  c["num_key_value_heads"] = m.kvHeads;
  c["head_dim"] = m.hidden / m.heads;
  c["max_position_embeddings"] = m.context;
  c["rope_theta"] = m.ropeTheta;
  if (m.ropeScaling.enabled())
    c["rope_scaling"] = {{"rope_type", m.ropeScaling.type},
                         {"factor", m.ropeScaling.factor},
                         {"low_freq_factor", m.ropeScaling.lowFreqFactor},
                         {"high_freq_factor", m.ropeScaling.highFreqFactor},
                         {"original_max_position_embeddings", m.ropeScaling.originalContext}};
  c["rms_norm_eps"] = m.rmsNormEps;
  c["hidden_act"] = "silu";
  if (!mixtral) {
    c["attention_bias"] = false;
    c["mlp_bias"] = false;
  }
  c["attention_dropout"] = 0.0;
  c["initializer_range"] = 0.02;
  c["tie_word_embeddings"] = m.tiedEmbeddings;
  c["torch_dtype"] = "float32";
  return c.dump(2) + "\n";
}

}  // namespace strata::models

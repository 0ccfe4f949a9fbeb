#include "llama_hugging_face.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

namespace strata::models {

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
      {"attention.o", "self_attn.o_proj", {h, q}},  {"mlp_norm", "post_attention_layernorm", {h}},
      {"mlp.gate", "mlp.gate_proj", {c.ffn, h}},    {"mlp.up", "mlp.up_proj", {c.ffn, h}},
      {"mlp.down", "mlp.down_proj", {h, c.ffn}}};
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string ours = "block" + std::to_string(i) + ".";
    std::string theirs = "model.layers." + std::to_string(i) + ".";
    for (const Weight& w : block)
      all.push_back({ours + w.ours + ".weight", theirs + w.theirs + ".weight", w.shape});
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

// The fields transformers' LlamaConfig reads.
std::string LlamaHuggingFace::configJson() const {
  const LlamaConfig& m = config_;
  nlohmann::ordered_json c;
  c["architectures"] = {"LlamaForCausalLM"};
  c["model_type"] = "llama";
  c["vocab_size"] = m.vocab;
  c["hidden_size"] = m.hidden;
  c["intermediate_size"] = m.ffn;
  c["num_hidden_layers"] = m.layers;
  c["num_attention_heads"] = m.heads;
  c["num_key_value_heads"] = m.kvHeads;
  c["head_dim"] = m.hidden / m.heads;
  c["max_position_embeddings"] = m.context;
  c["rope_theta"] = m.ropeTheta;
  c["rms_norm_eps"] = m.rmsNormEps;
  c["hidden_act"] = "silu";
  c["attention_bias"] = false;
  c["mlp_bias"] = false;
  c["attention_dropout"] = 0.0;
  c["initializer_range"] = 0.02;
  c["tie_word_embeddings"] = m.tiedEmbeddings;
  c["torch_dtype"] = "float32";
  return c.dump(2) + "\n";
}

}  // namespace strata::models

#include "independent_llama.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace strata::train::testing {
namespace {

const torch::Tensor& weight(const std::map<std::string, RawTensor>& w, const std::string& name) {
  auto found = w.find(name);
  if (found == w.end()) throw std::runtime_error("no tensor " + name);
  return found->second.value;
}

torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  torch::Tensor variance = x.pow(2).mean(-1, /*keepdim=*/true);
  return w * (x * torch::rsqrt(variance + eps));
}

torch::Tensor rotateHalf(const torch::Tensor& x) {
  int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

// [b, K, s, d] -> [b, K * n, s, d], each kv head n times in a row.
torch::Tensor repeatKv(const torch::Tensor& x, int64_t n) {
  int64_t b = x.size(0), k = x.size(1), s = x.size(2), d = x.size(3);
  return x.unsqueeze(2).expand({b, k, n, s, d}).reshape({b, k * n, s, d});
}

torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w) {
  return torch::matmul(x, w.t());
}

// modeling_mixtral's sparse MoE block: softmax over the router logits in
// float32, the top k renormalised, each expert w2(silu(w1 x) * w3 x) on its
// tokens, weighted and summed.
torch::Tensor mixtralMoe(const torch::Tensor& h, const std::map<std::string, RawTensor>& w,
                         const std::string& p, int64_t experts, int64_t topK) {
  torch::Tensor tokens = h.reshape({-1, h.size(-1)});
  torch::Tensor probabilities =
      torch::softmax(project(tokens, weight(w, p + "gate.weight")), 1, torch::kFloat);
  auto [gates, selected] = torch::topk(probabilities, topK, -1);
  gates = gates / gates.sum(-1, true);
  torch::Tensor out = torch::zeros_like(tokens);
  for (int64_t e = 0; e < experts; ++e) {
    torch::Tensor hit = (selected == e).nonzero();  // [n, 2]: token, slot
    if (hit.size(0) == 0) continue;
    torch::Tensor rows = hit.select(1, 0), slots = hit.select(1, 1);
    torch::Tensor x = tokens.index_select(0, rows);
    std::string expert = p + "experts." + std::to_string(e) + ".";
    torch::Tensor y = project(torch::silu(project(x, weight(w, expert + "w1.weight"))) *
                                  project(x, weight(w, expert + "w3.weight")),
                              weight(w, expert + "w2.weight"));
    out.index_add_(0, rows, y * gates.index({rows, slots}).unsqueeze(1));
  }
  return out.view(h.sizes());
}

}  // namespace

torch::Tensor huggingFaceLlamaLogits(const std::string& folder,
                                     const std::map<std::string, RawTensor>& w,
                                     const torch::Tensor& ids) {
  nlohmann::json config;
  std::ifstream in(folder + "/config.json");
  if (!in) throw std::runtime_error("no config.json in " + folder);
  in >> config;
  int64_t layers = config.at("num_hidden_layers"), heads = config.at("num_attention_heads");
  int64_t kvHeads = config.at("num_key_value_heads");
  double theta = config.at("rope_theta"), eps = config.at("rms_norm_eps");
  bool tied = config.at("tie_word_embeddings");

  torch::NoGradGuard noGrad;
  int64_t b = ids.size(0), s = ids.size(1);
  torch::Tensor embed = weight(w, "model.embed_tokens.weight");
  int64_t hidden = embed.size(1), d = hidden / heads;
  torch::Tensor x = embed.index_select(0, ids.reshape({-1})).reshape({b, s, hidden});
  torch::Tensor invFreq =
      1.0 / torch::pow(theta, torch::arange(0, d, 2, torch::kLong).to(torch::kFloat) / d);
  torch::Tensor freqs = torch::outer(torch::arange(s, torch::kFloat), invFreq);
  torch::Tensor emb = torch::cat({freqs, freqs}, -1);  // [s, d]
  torch::Tensor cos = emb.cos(), sin = emb.sin();
  torch::Tensor mask = torch::full({s, s}, -INFINITY).triu(1);
  for (int64_t i = 0; i < layers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    torch::Tensor h = rmsNorm(x, weight(w, p + "input_layernorm.weight"), eps);
    auto heads_ = [&](const torch::Tensor& t, int64_t n) {
      return t.view({b, s, n, d}).transpose(1, 2);
    };
    torch::Tensor q = heads_(project(h, weight(w, p + "self_attn.q_proj.weight")), heads);
    torch::Tensor k = heads_(project(h, weight(w, p + "self_attn.k_proj.weight")), kvHeads);
    torch::Tensor v = heads_(project(h, weight(w, p + "self_attn.v_proj.weight")), kvHeads);
    q = q * cos + rotateHalf(q) * sin;
    k = k * cos + rotateHalf(k) * sin;
    k = repeatKv(k, heads / kvHeads);
    v = repeatKv(v, heads / kvHeads);
    torch::Tensor scores = torch::matmul(q, k.transpose(2, 3)) / std::sqrt(double(d)) + mask;
    torch::Tensor out = torch::matmul(torch::softmax(scores, -1), v);
    out = out.transpose(1, 2).reshape({b, s, hidden});
    x = x + project(out, weight(w, p + "self_attn.o_proj.weight"));
    h = rmsNorm(x, weight(w, p + "post_attention_layernorm.weight"), eps);
    if (config.contains("num_local_experts")) {
      x = x + mixtralMoe(h, w, p + "block_sparse_moe.", config.at("num_local_experts"),
                         config.at("num_experts_per_tok"));
      continue;
    }
    torch::Tensor gate = project(h, weight(w, p + "mlp.gate_proj.weight"));
    torch::Tensor up = project(h, weight(w, p + "mlp.up_proj.weight"));
    x = x + project(torch::silu(gate) * up, weight(w, p + "mlp.down_proj.weight"));
  }
  x = rmsNorm(x, weight(w, "model.norm.weight"), eps);
  return project(x, tied ? embed : weight(w, "lm_head.weight"));
}

}  // namespace strata::train::testing

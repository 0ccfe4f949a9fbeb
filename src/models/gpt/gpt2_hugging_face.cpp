#include "gpt2_hugging_face.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

namespace strata::models {
namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isFusedQkv(const std::string& name) {
  return name.find(".attention.qkv.") != std::string::npos;
}

// Linear weights Hugging Face stores as Conv1D [in, out].
bool isConv1dWeight(const std::string& name) {
  return endsWith(name, ".attention.qkv.weight") || endsWith(name, ".attention.proj.weight") ||
         endsWith(name, ".mlp.fc1.weight") || endsWith(name, ".mlp.fc2.weight");
}

// The fused QKV rows [a, b, d, ...] as a view [b, a, d, ...]: {a, b} =
// {heads, 3} to GPT-2's order, {3, heads} back.
at::Tensor swapQkvGroups(const at::Tensor& rows, int64_t a, int64_t b) {
  std::vector<int64_t> split = {a, b, rows.size(0) / (a * b)};
  for (int64_t d = 1; d < rows.dim(); ++d) split.push_back(rows.size(d));
  return rows.view(split).transpose(0, 1);
}

// GPT-2's token for both the start and the end of a text, when the
// vocabulary is GPT-2's (or that padded).
constexpr int64_t kGpt2EndOfText = 50256;

}  // namespace

std::vector<HuggingFaceTensor> Gpt2HuggingFace::tensors() const {
  const GptConfig& m = config_;
  int64_t h = m.hidden;
  std::vector<HuggingFaceTensor> all = {
      {"embedding.tokens.weight", "transformer.wte.weight", {m.vocab, h}},
      {"embedding.positions", "transformer.wpe.weight", {m.context, h}}};
  struct Linear {
    const char *ours, *theirs;
    int64_t in, out;  // a LayerNorm has in = 0: weight and bias [out]
  };
  const std::vector<Linear> block = {{"ln1", "ln_1", 0, h},
                                     {"attention.qkv", "attn.c_attn", h, 3 * h},
                                     {"attention.proj", "attn.c_proj", h, h},
                                     {"ln2", "ln_2", 0, h},
                                     {"mlp.fc1", "mlp.c_fc", h, m.ffn},
                                     {"mlp.fc2", "mlp.c_proj", m.ffn, h}};
  for (int64_t i = 0; i < m.layers; ++i) {
    std::string ours = "block" + std::to_string(i) + ".";
    std::string theirs = "transformer.h." + std::to_string(i) + ".";
    for (const Linear& l : block) {
      std::vector<int64_t> weight = l.in ? std::vector<int64_t>{l.in, l.out}  // Conv1D [in, out]
                                         : std::vector<int64_t>{l.out};
      all.push_back({ours + l.ours + ".weight", theirs + l.theirs + ".weight", weight});
      all.push_back({ours + l.ours + ".bias", theirs + l.theirs + ".bias", {l.out}});
    }
  }
  all.push_back({"head.norm.weight", "transformer.ln_f.weight", {h}});
  all.push_back({"head.norm.bias", "transformer.ln_f.bias", {h}});
  return all;
}

at::Tensor Gpt2HuggingFace::toHuggingFace(const std::string& name, const at::Tensor& t) const {
  int64_t heads = config_.heads;
  // qkv rows [heads, 3, d] -> [3, heads, d], then Conv1D's [in, out].
  at::Tensor x = isFusedQkv(name) ? swapQkvGroups(t.contiguous(), heads, 3).reshape(t.sizes()) : t;
  return isConv1dWeight(name) ? x.t().contiguous() : x.contiguous();
}

at::Tensor Gpt2HuggingFace::blockOf(const std::string& name, const at::Tensor& t,
                                    const std::vector<int64_t>& offset,
                                    const std::vector<int64_t>& length) const {
  int64_t heads = config_.heads;
  at::Tensor x = isConv1dWeight(name) ? t.t() : t;  // [out, in] (or [out]), a view
  if (!isFusedQkv(name)) return narrowedBlock(x, offset, length);
  // [3, heads, d, ...] viewed head-major [heads, 3, d, ...]; the block's
  // whole heads, then its rows [heads' x 3 x d, ...] (copying only those).
  int64_t perHead = x.size(0) / heads;
  at::Tensor byHead = swapQkvGroups(x, 3, heads);
  if (offset[0] % perHead != 0 || length[0] % perHead != 0)  // not whole heads: all rows
    return narrowedBlock(byHead.reshape(x.sizes()), offset, length);
  byHead = byHead.narrow(0, offset[0] / perHead, length[0] / perHead);
  std::vector<int64_t> rows = {length[0]};
  for (int64_t d = 1; d < x.dim(); ++d) rows.push_back(x.size(d));
  return narrowedBlock(byHead.reshape(rows), offset, length, 1);
}

// Tensors GPT-2 files may carry that are no parameters of the model: the
// head tied to wte (some writers save it anyway) and older transformers'
// causal-mask buffers.
bool Gpt2HuggingFace::ignorable(const std::string& name) const {
  return name == "lm_head.weight" || endsWith(name, ".attn.bias") ||
         endsWith(name, ".attn.masked_bias");
}

// The fields transformers' GPT2Config reads; "gelu_new" is its name for the
// tanh approximation.
std::string Gpt2HuggingFace::configJson() const {
  const GptConfig& m = config_;
  nlohmann::ordered_json c;
  c["architectures"] = {"GPT2LMHeadModel"};
  c["model_type"] = "gpt2";
  c["vocab_size"] = m.vocab;
  c["n_positions"] = m.context;
  c["n_ctx"] = m.context;
  c["n_embd"] = m.hidden;
  c["n_layer"] = m.layers;
  c["n_head"] = m.heads;
  c["n_inner"] = m.ffn;
  c["activation_function"] = "gelu_new";
  c["layer_norm_epsilon"] = 1e-5;
  c["resid_pdrop"] = m.dropout;
  c["embd_pdrop"] = m.dropout;
  c["attn_pdrop"] = m.dropout;
  c["initializer_range"] = 0.02;
  c["tie_word_embeddings"] = true;
  c["torch_dtype"] = "float32";
  if (m.vocab > kGpt2EndOfText) {
    c["bos_token_id"] = kGpt2EndOfText;
    c["eos_token_id"] = kGpt2EndOfText;
  }
  return c.dump(2) + "\n";
}

}  // namespace strata::models

// GPT-2's config.json (transformers' GPT2Config) in Strata's [model] keys:
// the inverse of Gpt2HuggingFace::configJson.
#include <cmath>
#include <string>

#include "models/hugging_face_config.h"

namespace strata::models {

ModelToml gpt2ModelToml(const HuggingFaceConfig& c) {
  std::string activation = c.text("activation_function", "gelu_new");
  // transformers' two names for the tanh approximation Strata's gpt2 computes.
  if (activation != "gelu_new" && activation != "gelu_pytorch_tanh")
    c.refuse("activation_function \"" + activation + "\" (Strata's gpt2 is the tanh GELU)");
  double epsilon = c.number("layer_norm_epsilon", 1e-5);
  if (std::abs(epsilon - 1e-5) > 1e-12)
    c.refuse("layer_norm_epsilon " + std::to_string(epsilon) + " (Strata's gpt2 has 1e-5)");
  if (!c.flag("tie_word_embeddings", true)) c.refuse("an untied head (GPT-2's is tied)");
  if (!c.flag("scale_attn_weights", true)) c.refuse("unscaled attention");
  if (c.flag("scale_attn_by_inverse_layer_idx", false))
    c.refuse("attention scaled by the inverse layer index");
  if (c.flag("reorder_and_upcast_attn", false)) c.refuse("reorder_and_upcast_attn");
  int64_t hidden = c.size("n_embd");
  std::optional<int64_t> context = c.optionalSize("n_positions");
  ModelToml toml;
  toml.model = {{"architecture", std::string("gpt2")},
                {"layers", c.size("n_layer")},
                {"hidden", hidden},
                {"heads", c.size("n_head")},
                {"ffn", c.optionalSize("n_inner").value_or(4 * hidden)},
                {"vocab", c.size("vocab_size")},
                {"context", context ? *context : c.size("n_ctx")},
                {"tied_embeddings", true}};
  return toml;
}

}  // namespace strata::models

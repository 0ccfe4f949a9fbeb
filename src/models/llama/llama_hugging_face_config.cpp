// A Llama's or Mixtral's config.json (transformers' LlamaConfig,
// MixtralConfig) in Strata's [model] keys: the inverse of
// LlamaHuggingFace::configJson. Fields the file leaves out take
// transformers' defaults for its class.
#include <string>

#include "models/hugging_face_config.h"

namespace strata::models {
namespace {

void refuseWhatStrataDoesNotCompute(const HuggingFaceConfig& c, bool mixtral) {
  std::string activation = c.text("hidden_act", "silu");
  if (activation != "silu")
    c.refuse("hidden_act \"" + activation + "\" (Strata's llama is SwiGLU, of silu)");
  if (c.flag("attention_bias", false)) c.refuse("attention biases");
  if (c.flag("mlp_bias", false)) c.refuse("MLP biases");
  if (mixtral && c.has("sliding_window")) c.refuse("sliding-window attention");
  int64_t hidden = c.size("hidden_size"), heads = c.size("num_attention_heads");
  std::optional<int64_t> headDim = c.optionalSize("head_dim");
  if (headDim && *headDim * heads != hidden)
    c.refuse("head_dim " + std::to_string(*headDim) + " where hidden_size / num_attention_heads " +
             "is " + std::to_string(hidden / heads) + " (Strata's heads split the width)");
}

// The rotary base and its scaling: transformers 5 writes them together as
// rope_parameters ({"rope_type", "rope_theta" and the type's own fields}),
// earlier versions as rope_theta and rope_scaling.
double ropeThetaOf(const HuggingFaceConfig& c, bool mixtral) {
  double theta = c.number("rope_theta", mixtral ? 1e6 : 1e4);
  std::optional<HuggingFaceConfig> parameters = c.object("rope_parameters");
  return parameters ? parameters->number("rope_theta", theta) : theta;
}

// The scaling, in whichever of the two forms the file has: absent, null or
// of type "default" (none), or Llama 3.1's "llama3" (older files call the
// type "type").
std::vector<std::pair<std::string, util::TomlValue>> ropeScalingOf(const HuggingFaceConfig& c) {
  std::string field = c.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  std::optional<HuggingFaceConfig> scaling = c.object(field);
  if (!scaling) return {};
  std::string type = scaling->text("rope_type", scaling->text("type", "default"));
  if (type == "default") return {};
  if (type != "llama3")
    c.refuse(field + " of type \"" + type + "\" (Strata's llama has llama3 scaling only)");
  return {{"type", type},
          {"factor", scaling->number("factor", 8.0)},
          {"low_freq_factor", scaling->number("low_freq_factor", 1.0)},
          {"high_freq_factor", scaling->number("high_freq_factor", 4.0)},
          {"original_context", scaling->size("original_max_position_embeddings")}};
}

}  // namespace

ModelToml llamaModelToml(const HuggingFaceConfig& c, bool mixtral) {
  refuseWhatStrataDoesNotCompute(c, mixtral);
  int64_t heads = c.size("num_attention_heads");
  ModelToml toml;
  toml.model = {{"architecture", std::string("llama")},
                {"layers", c.size("num_hidden_layers")},
                {"hidden", c.size("hidden_size")},
                {"heads", heads},
                {"kv_heads", c.optionalSize("num_key_value_heads").value_or(heads)},
                {"ffn", c.size("intermediate_size")},
                {"vocab", c.size("vocab_size")},
                {"context", c.size("max_position_embeddings")},
                {"rope_theta", ropeThetaOf(c, mixtral)},
                {"rms_norm_eps", c.number("rms_norm_eps", mixtral ? 1e-5 : 1e-6)},
                {"tied_embeddings", c.flag("tie_word_embeddings", false)}};
  if (mixtral)
    toml.moe = {{"experts", c.size("num_local_experts")},
                {"top_k", c.size("num_experts_per_tok")},
                {"expert_ffn", c.size("intermediate_size")},
                {"shared_experts", int64_t{0}},
                {"every", int64_t{1}},
                {"normalize_top_k", true},
                {"aux_loss_coeff", c.number("router_aux_loss_coef", 0.001)}};
  toml.ropeScaling = ropeScalingOf(c);
  return toml;
}

}  // namespace strata::models

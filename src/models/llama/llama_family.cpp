#include "llama_family.h"

#include "llama_hugging_face.h"
#include "strata/error.h"
#include "strata/models/llama.h"

namespace strata::models {

void LlamaFamily::check(const ModelSpec& spec, int tp) const {
  if (spec.dropout != 0.0)
    throw ConfigError("the llama family has no dropout: model.dropout must be 0, got " +
                      std::to_string(spec.dropout));
  checkLlama(llamaConfigOf(spec), tp);
}

torch::nn::Sequential LlamaFamily::build(
    const ModelSpec& spec, std::shared_ptr<Communicator> tp,
    std::shared_ptr<const context_parallel::ContextParallel> cp,
    std::shared_ptr<expert_parallel::ExpertParallel> ep, const std::vector<bool>& held,
    HeldAs heldAs) const {
  return buildLlama(llamaConfigOf(spec), std::move(tp), std::move(cp), std::move(ep), held, heldAs);
}

std::shared_ptr<torch::nn::Module> LlamaFamily::buildLayer(
    const ModelSpec& spec, int64_t layer, std::shared_ptr<Communicator> tp,
    std::shared_ptr<const context_parallel::ContextParallel> cp,
    std::shared_ptr<expert_parallel::ExpertParallel> ep) const {
  return buildLlamaLayer(llamaConfigOf(spec), layer, std::move(tp), std::move(cp), std::move(ep));
}

int64_t LlamaFamily::parameterCount(const ModelSpec& spec) const {
  return llamaParameterCount(llamaConfigOf(spec));
}

int64_t LlamaFamily::matmulParameters(const ModelSpec& spec) const {
  return llamaMatmulParameters(llamaConfigOf(spec));
}

std::unique_ptr<HuggingFaceLayout> LlamaFamily::huggingFace(const ModelSpec& spec) const {
  return std::make_unique<LlamaHuggingFace>(llamaConfigOf(spec));
}

}  // namespace strata::models

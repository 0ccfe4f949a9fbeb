#include "gpt_family.h"

#include "gpt2_hugging_face.h"
#include "strata/error.h"
#include "strata/models/gpt.h"

namespace strata::models {

void GptFamily::check(const ModelSpec& spec, int tp) const { checkGpt(gptConfigOf(spec), tp); }

torch::nn::Sequential GptFamily::build(const ModelSpec& spec, std::shared_ptr<Communicator> tp,
                                       std::shared_ptr<const context_parallel::ContextParallel> cp,
                                       std::shared_ptr<expert_parallel::ExpertParallel> ep,
                                       const std::vector<bool>& held, HeldAs heldAs) const {
  return buildGpt(gptConfigOf(spec), std::move(tp), std::move(cp), std::move(ep), held, heldAs);
}

std::shared_ptr<torch::nn::Module> GptFamily::buildLayer(
    const ModelSpec& spec, int64_t layer, std::shared_ptr<Communicator> tp,
    std::shared_ptr<const context_parallel::ContextParallel> cp,
    std::shared_ptr<expert_parallel::ExpertParallel> ep) const {
  return buildGptLayer(gptConfigOf(spec), layer, std::move(tp), std::move(cp), std::move(ep));
}

int64_t GptFamily::parameterCount(const ModelSpec& spec) const {
  return gptParameterCount(gptConfigOf(spec));
}

int64_t GptFamily::matmulParameters(const ModelSpec& spec) const {
  return gptMatmulParameters(gptConfigOf(spec));
}

// Only gpt2's weights mean in transformers' GPT-2 what they mean here (the
// strata architecture's exact GELU has no GPT-2 counterpart).
std::unique_ptr<HuggingFaceLayout> GptFamily::huggingFace(const ModelSpec& spec) const {
  if (spec.architecture != "gpt2")
    throw ConfigError("architecture '" + spec.architecture +
                      "' has no Hugging Face equivalent: its weights mean something else in "
                      "GPT-2 implementations (train with --architecture gpt2 or llama)");
  if (spec.moe.enabled())
    throw ConfigError(
        "GPT-2's Hugging Face format (GPT2LMHeadModel) has no mixture of experts; "
        "a gpt2 model with model.moe (" +
        std::to_string(spec.moe.experts) +
        " experts) cannot be exported or initialised from it (the llama family "
        "exports as Mixtral)");
  return std::make_unique<Gpt2HuggingFace>(gptConfigOf(spec));
}

}  // namespace strata::models

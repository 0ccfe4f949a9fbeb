#include "strata/models/model_family.h"

#include "decoder_head.h"
#include "gpt/gpt_family.h"
#include "llama/llama_family.h"
#include "strata/error.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"

namespace strata::models {
namespace {

struct Registered {
  const char* architecture;
  const ModelFamily& family;
};

const std::vector<Registered>& registry() {
  static const GptFamily gpt;
  static const LlamaFamily llama;
  static const std::vector<Registered> table = {{"strata", gpt}, {"gpt2", gpt}, {"llama", llama}};
  return table;
}

}  // namespace

const ModelFamily& modelFamily(const std::string& architecture) {
  for (const Registered& entry : registry())
    if (architecture == entry.architecture) return entry.family;
  std::string known;
  for (const std::string& name : modelArchitectures()) known += (known.empty() ? "" : ", ") + name;
  throw ConfigError("unknown model architecture '" + architecture + "' (known: " + known + ")");
}

std::vector<int64_t> blockStandIns(const ModelSpec& spec) {
  std::vector<int64_t> standIns;
  for (int64_t block = 0; block < spec.layers; ++block) {
    int64_t first = 0;
    while (spec.moe.isMoeBlock(first) != spec.moe.isMoeBlock(block)) ++first;
    standIns.push_back(first);
  }
  return standIns;
}

std::vector<std::string> modelArchitectures() {
  std::vector<std::string> names;
  for (const Registered& entry : registry()) names.push_back(entry.architecture);
  return names;
}

namespace {

// Each target's weight in the loss: 1 / countedTargets where it counts
// (>= 0), else 0. [b, s] float32.
at::Tensor targetWeights(const at::Tensor& targets, double countedTargets) {
  return targets.ge(0).to(at::kFloat).div_(countedTargets);
}

}  // namespace

at::Tensor nextTokenLoss(const at::Tensor& logits, const at::Tensor& targets, Communicator& tp,
                         double countedTargets) {
  // targets [b, s] -> [s, b] to match the logits. The loss is taken in
  // float32 when autocast computed the logits in bfloat16.
  at::Tensor full = logits.scalar_type() == at::kFloat ? logits : logits.to(at::kFloat);
  if (countedTargets <= 0)
    return tensor_parallel::vocabParallelCrossEntropy(full, targets.t().contiguous(), tp).mean();
  // A target left out is read as id 0 and weighed 0.
  at::Tensor losses =
      tensor_parallel::vocabParallelCrossEntropy(full, targets.clamp_min(0).t().contiguous(), tp);
  return losses.mul(targetWeights(targets, countedTargets).t()).sum();
}

at::Tensor modelOutputLoss(const torch::nn::Sequential& model, const at::Tensor& output,
                           const at::Tensor& targets, double countedTargets) {
  auto* head = model->ptr(model->size() - 1)->as<DecoderHeadImpl>();
  if (!head) throw ConfigError("the model's last layer is not a decoder head");
  if (!head->fusedLoss()) return nextTokenLoss(output, targets, head->tp(), countedTargets);
  if (countedTargets <= 0) return head->loss(output, targets);
  return head->loss(output, targets.clamp_min(0), targetWeights(targets, countedTargets));
}

}  // namespace strata::models

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

at::Tensor nextTokenLoss(const at::Tensor& logits, const at::Tensor& targets, Communicator& tp) {
  // targets [b, s] -> [s, b] to match the logits. The loss is taken in
  // float32 when autocast computed the logits in bfloat16.
  at::Tensor full = logits.scalar_type() == at::kFloat ? logits : logits.to(at::kFloat);
  return tensor_parallel::vocabParallelCrossEntropy(full, targets.t().contiguous(), tp).mean();
}

at::Tensor modelOutputLoss(const torch::nn::Sequential& model, const at::Tensor& output,
                           const at::Tensor& targets) {
  auto* head = model->ptr(model->size() - 1)->as<DecoderHeadImpl>();
  if (!head) throw ConfigError("the model's last layer is not a decoder head");
  return head->fusedLoss() ? head->loss(output, targets)
                           : nextTokenLoss(output, targets, head->tp());
}

}  // namespace strata::models

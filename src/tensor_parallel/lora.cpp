#include "strata/tensor_parallel/lora.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/error.h"
#include "strata/ops/linear.h"

namespace strata::tensor_parallel {
namespace {

// A sub-stream of the adapted layer's seed that none of its own draws use.
constexpr uint64_t kLoraStream = 0x10a;

bool endsWith(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

LoraOptions LoraConfig::on(const std::string& target) const {
  static const std::vector<std::string> kTargets = {"q", "k", "v", "o", "gate", "up", "down"};
  if (targets.count(target) == 0) return {};
  auto place = std::find(kTargets.begin(), kTargets.end(), target);
  if (place == kTargets.end()) throw ConfigError("LoRA has no target '" + target + "'");
  LoraOptions options = adapter;
  options.dropoutSeed =
      deriveSeed(adapter.dropoutSeed, static_cast<uint64_t>(place - kTargets.begin()));
  return options;
}

bool isProjectionWeight(const std::string& name) {
  static const std::vector<std::string> kProjections = {"q", "k", "v", "o", "gate", "up", "down"};
  const std::string suffix = ".weight";
  if (!endsWith(name, suffix)) return false;
  std::string module = name.substr(0, name.size() - suffix.size());
  std::string last = module.substr(module.rfind('.') + 1);
  return std::find(kProjections.begin(), kProjections.end(), last) != kProjections.end();
}

bool isLoraParameter(const std::string& name) {
  return endsWith(name, std::string(".") + kLoraA) || endsWith(name, std::string(".") + kLoraB) ||
         name == kLoraA || name == kLoraB;
}

LoraWeights loraWeights(const LoraOptions& options, int64_t in, int64_t out,
                        const InitOptions& init) {
  uint64_t seed = deriveSeed(init.seed, kLoraStream);
  double std = 1.0 / std::sqrt(static_cast<double>(in));
  auto float32 = at::TensorOptions().dtype(at::kFloat);
  return {seededNormal({options.rank, in}, seed, std, init.draw),
          init.draw ? at::zeros({out, options.rank}, float32)
                    : at::empty({out, options.rank}, float32)};
}

at::Tensor loraProduct(const at::Tensor& x, const at::Tensor& a, const at::Tensor& b,
                       const LoraOptions& options) {
  return ops::linear(ops::linear(x, a), b) * options.scale();  // [..., r] -> [..., out']
}

void mergeLoraAdapters(torch::nn::Module& model, const LoraOptions& options) {
  torch::NoGradGuard noGrad;
  auto named = model.named_parameters();
  const std::string suffixA = std::string(".") + kLoraA;
  for (const auto& item : named) {
    const std::string& name = item.key();
    if (!endsWith(name, suffixA)) continue;
    std::string module = name.substr(0, name.size() - suffixA.size());
    at::Tensor* weight = named.find(module + ".weight");
    at::Tensor* b = named.find(module + "." + kLoraB);
    if (!weight || !b)
      throw ConfigError("adapter '" + name + "' has no weight or lora_b beside it");
    weight->add_(at::matmul(*b, item.value()) * options.scale());  // [out, r] x [r, in]
    b->zero_();
  }
}

}  // namespace strata::tensor_parallel

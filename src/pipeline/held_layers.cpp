#include "pipeline/held_layers.h"

#include <algorithm>
#include <unordered_set>

namespace strata::pipeline {
namespace {

using Impls = std::unordered_set<const c10::TensorImpl*>;

// Every parameter and buffer of `layer`, its children's included.
std::vector<at::Tensor> tensorsOf(const torch::nn::Module& layer) {
  std::vector<at::Tensor> all = layer.parameters();
  for (const at::Tensor& buffer : layer.buffers()) all.push_back(buffer);
  return all;
}

bool holdsAny(const torch::nn::Module& layer, const Impls& kept) {
  for (const at::Tensor& p : layer.parameters())
    if (kept.count(p.unsafeGetTensorImpl())) return true;
  return false;
}

}  // namespace

std::vector<bool> releaseOtherLayers(torch::nn::Sequential& model,
                                     const std::vector<at::Tensor>& kept) {
  Impls keptImpls;
  for (const at::Tensor& t : kept) keptImpls.insert(t.unsafeGetTensorImpl());
  std::vector<std::shared_ptr<torch::nn::Module>> layers = model->children();
  std::vector<bool> held;
  Impls inHeldLayers;
  for (const auto& layer : layers) {
    held.push_back(holdsAny(*layer, keptImpls));
    if (!held.back()) continue;
    for (const at::Tensor& t : tensorsOf(*layer)) inHeldLayers.insert(t.unsafeGetTensorImpl());
  }
  if (std::all_of(held.begin(), held.end(), [](bool h) { return h; })) return {};
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (held[i]) continue;
    for (at::Tensor t : tensorsOf(*layers[i])) {
      if (!inHeldLayers.count(t.unsafeGetTensorImpl())) t.set_();
    }
  }
  return held;
}

}  // namespace strata::pipeline

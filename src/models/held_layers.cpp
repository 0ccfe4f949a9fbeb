#include "models/held_layers.h"

#include <torch/torch.h>

#include <string>

#include "strata/error.h"

namespace strata::models {

void checkHeldLayers(const std::vector<bool>& held, int64_t layers) {
  if (held.empty() || static_cast<int64_t>(held.size()) == layers + 2) return;
  throw ConfigError("the held layers name " + std::to_string(held.size()) +
                    " top-level modules, but a model of " + std::to_string(layers) +
                    " blocks has " + std::to_string(layers + 2) +
                    " (the embedding, the blocks, the head)");
}

void checkLayerIndex(int64_t layer, int64_t layers) {
  if (layer >= 0 && layer < layers + 2) return;
  throw ConfigError("layer " + std::to_string(layer) + " does not exist: a model of " +
                    std::to_string(layers) + " blocks has layers 0 (the embedding) to " +
                    std::to_string(layers + 1) + " (the head)");
}

bool drawsValues(const std::vector<bool>& held, int64_t layer, int64_t last, HeldAs heldAs) {
  bool kept = held.empty() || held[static_cast<size_t>(layer)];
  if (!kept) return layer == 0 || layer == last;
  return heldAs == HeldAs::kWhole;
}

void leaveBlock(torch::nn::Module& module, const std::vector<bool>& held, int64_t block,
                HeldAs heldAs) {
  if (!held.empty() && !held[static_cast<size_t>(block + 1)]) {
    torch::NoGradGuard noGrad;
    for (at::Tensor parameter : module.parameters()) parameter.set_();
    for (at::Tensor buffer : module.buffers()) buffer.set_();
    return;
  }
  leaveHeld(module, heldAs);
}

void leaveEnd(torch::nn::Module& module, const std::vector<bool>& held, int64_t layer,
              HeldAs heldAs) {
  if (held.empty() || held[static_cast<size_t>(layer)]) leaveHeld(module, heldAs);
}

void leaveHeld(torch::nn::Module& module, HeldAs heldAs) {
  if (heldAs != HeldAs::kShells) return;
  torch::NoGradGuard noGrad;
  // One zero per parameter, expanded: the shape stays for whoever lays the
  // parameters out (ZeRO-3's units), and writing to it fails loudly.
  for (at::Tensor parameter : module.parameters())
    parameter.set_(at::zeros({1}, parameter.options()).expand(parameter.sizes()));
}

}  // namespace strata::models

#include "models/held_blocks.h"

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

void checkBlockIndex(int64_t block, int64_t layers) {
  if (block >= 0 && block < layers) return;
  throw ConfigError("block " + std::to_string(block) + " does not exist: the model has " +
                    std::to_string(layers) + " blocks, 0 to " + std::to_string(layers - 1));
}

void leaveBlock(torch::nn::Module& module, const std::vector<bool>& held, int64_t block,
                HeldBlocks heldAs) {
  torch::NoGradGuard noGrad;
  if (!held.empty() && !held[static_cast<size_t>(block + 1)]) {
    for (at::Tensor parameter : module.parameters()) parameter.set_();
    for (at::Tensor buffer : module.buffers()) buffer.set_();
    return;
  }
  if (heldAs != HeldBlocks::kShells) return;
  // One zero per parameter, expanded: the shape stays for whoever lays the
  // parameters out (ZeRO-3's units), and writing to it fails loudly.
  for (at::Tensor parameter : module.parameters())
    parameter.set_(at::zeros({1}, parameter.options()).expand(parameter.sizes()));
}

}  // namespace strata::models

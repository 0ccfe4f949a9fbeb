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

void emptyUnheldBlock(torch::nn::Module& module, const std::vector<bool>& held, int64_t block) {
  if (held.empty() || held[static_cast<size_t>(block + 1)]) return;
  torch::NoGradGuard noGrad;
  for (at::Tensor parameter : module.parameters()) parameter.set_();
  for (at::Tensor buffer : module.buffers()) buffer.set_();
}

}  // namespace strata::models

// How every decoder family puts its parts together: the embedding, the
// blocks and the head, as ModelFamily::build and buildLayer return them. A
// family says how to make each part; the order, the names, the tied head and
// what `held` leaves of each part (held_layers.h) are decided here once.
//
// A family's `parts` makes each, given `draw` (false: shapes only, no values
// drawn):
//   parts.embedding(draw)      -> a module holder whose ->tokens is the
//                                 tp::VocabParallelEmbedding a tied head shares
//   parts.block(index, draw)   -> block `index` (0 to layers - 1)
//   parts.head(tiedTo, draw)   -> the DecoderHead, its weight its own when
//                                 tiedTo is empty, else tiedTo's
// Nothing blocks.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/held_layers.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"

namespace strata::models {

// The whole model: "embedding", "block0" .. "block<layers-1>", "head".
template <typename Parts>
torch::nn::Sequential assembleDecoder(int64_t layers, bool tiedEmbeddings,
                                      const std::vector<bool>& held, HeldAs heldAs,
                                      const Parts& parts) {
  checkHeldLayers(held, layers);
  torch::nn::Sequential model;
  int64_t last = layers + 1;
  auto embedding = parts.embedding(drawsValues(held, 0, last, heldAs));
  leaveEnd(*embedding, held, 0, heldAs);
  model->push_back("embedding", embedding);
  for (int64_t i = 0; i < layers; ++i) {
    auto block = parts.block(i, drawsValues(held, i + 1, last, heldAs));
    leaveBlock(*block, held, i, heldAs);
    model->push_back("block" + std::to_string(i), block);
  }
  tensor_parallel::VocabParallelEmbedding tiedTo{nullptr};
  if (tiedEmbeddings) tiedTo = embedding->tokens;
  auto head = parts.head(tiedTo, drawsValues(held, last, last, heldAs));
  leaveEnd(*head, held, last, heldAs);
  model->push_back("head", head);
  return model;
}

// Top-level module `layer` alone, with its values: 0 the embedding, 1 to
// layers the blocks, layers + 1 the head (tied to an embedding made for it).
template <typename Parts>
std::shared_ptr<torch::nn::Module> assembleDecoderLayer(int64_t layer, int64_t layers,
                                                        bool tiedEmbeddings, const Parts& parts) {
  checkLayerIndex(layer, layers);
  if (layer == 0) return parts.embedding(true).ptr();
  if (layer == layers + 1) {
    tensor_parallel::VocabParallelEmbedding tiedTo{nullptr};
    if (tiedEmbeddings) tiedTo = parts.embedding(true)->tokens;
    return parts.head(tiedTo, true).ptr();
  }
  return parts.block(layer - 1, true).ptr();
}

}  // namespace strata::models

// Strata's Llama under torchtitan's names (its Llama 3 model, as its
// torch.distributed.checkpoint checkpoints hold it), for `strata checkpoint
// convert --to-dcp / --from-dcp` (strata/checkpoint/dcp_convert.h):
//
//   embedding.tokens.weight             tok_embeddings.weight
//   blockN.attention_norm.weight        layers.N.attention_norm.weight
//   blockN.attention.{q,k,v,o}.weight   layers.N.attention.w{q,k,v,o}.weight
//   blockN.mlp_norm.weight              layers.N.ffn_norm.weight
//   blockN.mlp.{gate,down,up}.weight    layers.N.feed_forward.w{1,2,3}.weight
//   head.norm.weight                    norm.weight
//   head.lm_head.weight                 output.weight
//
// Every tensor keeps its shape, but not every row its place: torchtitan
// turns each adjacent pair (2i, 2i+1) of a head's q and k features through
// complex numbers, where Strata, like Hugging Face, turns the halves
// (i, i + d/2) (tensor_parallel/rotary.h). So q's and k's rows, and AdamW's
// moments of them, are reordered within each head on the way.
//
// Dense, untied Llama only: torchtitan's Llama has an output layer of its
// own and no mixture of experts. Nothing here blocks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "strata/models/model_family.h"

namespace strata::models {

struct TorchtitanTensor {
  std::string strata;
  std::string torchtitan;
  // q and k: the heads whose rows are reordered; 0 for every other tensor.
  int64_t rotaryHeads = 0;
};

// Every parameter of `spec`'s whole model, in the model's order. Throws
// ConfigError naming the setting for a model torchtitan's Llama cannot hold
// (another architecture, tied embeddings, MoE blocks).
std::vector<TorchtitanTensor> torchtitanTensors(const ModelSpec& spec);

// rows [heads * d, ...] with each head's features in halves order, in
// torchtitan's adjacent-pairs order; pairsToHalves is its inverse.
at::Tensor halvesToPairs(const at::Tensor& rows, int64_t heads);
at::Tensor pairsToHalves(const at::Tensor& rows, int64_t heads);

}  // namespace strata::models

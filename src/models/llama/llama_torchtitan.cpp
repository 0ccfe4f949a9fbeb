#include "llama_torchtitan.h"

#include <ATen/ATen.h>

#include "strata/error.h"

namespace strata::models {
namespace {

void refuseWhatTorchtitanCannotHold(const ModelSpec& spec) {
  auto refuse = [](const std::string& setting) {
    throw ConfigError("torchtitan's Llama cannot hold a model with " + setting +
                      ": it is a dense Llama with an output layer of its own");
  };
  if (modelFamily(spec.architecture).name() != "llama")
    refuse("model.architecture = \"" + spec.architecture + "\"");
  if (spec.tiedEmbeddings) refuse("model.tied_embeddings = true");
  if (spec.moe.enabled()) refuse("model.moe.experts = " + std::to_string(spec.moe.experts));
}

}  // namespace

std::vector<TorchtitanTensor> torchtitanTensors(const ModelSpec& spec) {
  refuseWhatTorchtitanCannotHold(spec);
  std::vector<TorchtitanTensor> all = {{"embedding.tokens.weight", "tok_embeddings.weight"}};
  for (int64_t i = 0; i < spec.layers; ++i) {
    std::string ours = "block" + std::to_string(i) + ".";
    std::string theirs = "layers." + std::to_string(i) + ".";
    all.push_back({ours + "attention_norm.weight", theirs + "attention_norm.weight"});
    all.push_back({ours + "attention.q.weight", theirs + "attention.wq.weight", spec.heads});
    all.push_back(
        {ours + "attention.k.weight", theirs + "attention.wk.weight", spec.kvHeadCount()});
    all.push_back({ours + "attention.v.weight", theirs + "attention.wv.weight"});
    all.push_back({ours + "attention.o.weight", theirs + "attention.wo.weight"});
    all.push_back({ours + "mlp_norm.weight", theirs + "ffn_norm.weight"});
    all.push_back({ours + "mlp.gate.weight", theirs + "feed_forward.w1.weight"});
    all.push_back({ours + "mlp.up.weight", theirs + "feed_forward.w3.weight"});
    all.push_back({ours + "mlp.down.weight", theirs + "feed_forward.w2.weight"});
  }
  all.push_back({"head.norm.weight", "norm.weight"});
  all.push_back({"head.lm_head.weight", "output.weight"});
  return all;
}

// Halves order puts feature 2i of a head's pairs order at row i and 2i + 1
// at row i + d/2: as [heads, 2, d/2, ...] the halves, swapped to
// [heads, d/2, 2, ...], read out as adjacent pairs.
at::Tensor halvesToPairs(const at::Tensor& rows, int64_t heads) {
  int64_t d = rows.size(0) / heads;
  std::vector<int64_t> shape = {heads, 2, d / 2};
  for (int64_t dim = 1; dim < rows.dim(); ++dim) shape.push_back(rows.size(dim));
  return rows.reshape(shape).transpose(1, 2).reshape(rows.sizes()).contiguous();
}

at::Tensor pairsToHalves(const at::Tensor& rows, int64_t heads) {
  int64_t d = rows.size(0) / heads;
  std::vector<int64_t> shape = {heads, d / 2, 2};
  for (int64_t dim = 1; dim < rows.dim(); ++dim) shape.push_back(rows.size(dim));
  return rows.reshape(shape).transpose(1, 2).reshape(rows.sizes()).contiguous();
}

}  // namespace strata::models

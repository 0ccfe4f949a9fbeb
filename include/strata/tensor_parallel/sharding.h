// How a tensor-parallel module's parameters are split, and how to rebuild
// the full (serial) parameters from the shards — for tests, checkpoints and
// resharding.
//
// gatherFullParameters is a collective over `tp`: every rank must call it
// with the same module structure; it blocks at most the communicator's
// timeout. shardDimOf throws ConfigError for an unknown parameter name.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <string>
#include <utility>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::tensor_parallel {

constexpr int64_t kReplicated = -1;

// Implemented by every module that registers parameters of its own: which
// dimension of each direct parameter is split over the tp group.
class ShardedModule {
 public:
  virtual ~ShardedModule() = default;
  // The split dimension of direct parameter `name`, or kReplicated.
  virtual int64_t shardDim(const std::string& name) const = 0;
  // The serial parameter's size along the split dimension when it is smaller
  // than tp x the shard's (a vocabulary padded to a multiple of tp, the
  // padding at the end), else kNotPadded.
  virtual int64_t unpaddedSize(const std::string& name) const { return kNotPadded; }
  static constexpr int64_t kNotPadded = -1;
};

// The split dimension of `root`'s parameter `qualifiedName` ("mlp.fc1.weight").
// Parameters of modules that are not ShardedModule count as replicated.
int64_t shardDimOf(const torch::nn::Module& root, const std::string& qualifiedName);

// The shape of the serial (unpadded) parameter whose tp shard of
// `shardSizes` this rank holds; for checkpoint indexes.
std::vector<int64_t> wholeShapeOf(const torch::nn::Module& root, const std::string& qualifiedName,
                                  at::IntArrayRef shardSizes, int tpSize);

// Every parameter of `root` (recursively, in named_parameters() order) as the
// full tensor the serial module would hold: shards all-gathered along their
// split dimension, replicated parameters copied.
std::vector<std::pair<std::string, at::Tensor>> gatherFullParameters(const torch::nn::Module& root,
                                                                     Communicator& tp);

}  // namespace strata::tensor_parallel

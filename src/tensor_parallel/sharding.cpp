#include "strata/tensor_parallel/sharding.h"

#include <torch/torch.h>

#include "collectives.h"
#include "strata/error.h"

namespace strata::tensor_parallel {
namespace {

std::string qualify(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// Qualified parameter name -> split dimension, for every parameter of root.
std::map<std::string, int64_t> shardDims(const torch::nn::Module& root) {
  std::map<std::string, int64_t> dims;
  for (const auto& entry : root.named_modules()) {
    const auto* sharded = dynamic_cast<const ShardedModule*>(entry.value().get());
    for (const auto& param : entry.value()->named_parameters(/*recurse=*/false)) {
      dims[qualify(entry.key(), param.key())] =
          sharded ? sharded->shardDim(param.key()) : kReplicated;
    }
  }
  return dims;
}

}  // namespace

int64_t shardDimOf(const torch::nn::Module& root, const std::string& qualifiedName) {
  auto dims = shardDims(root);
  auto found = dims.find(qualifiedName);
  if (found == dims.end()) {
    throw ConfigError("module " + root.name() + " has no parameter " + qualifiedName);
  }
  return found->second;
}

std::vector<int64_t> wholeShapeOf(const torch::nn::Module& root, const std::string& qualifiedName,
                                  at::IntArrayRef shardSizes, int tpSize) {
  std::vector<int64_t> shape = shardSizes.vec();
  int64_t dim = shardDimOf(root, qualifiedName);
  if (dim == kReplicated) return shape;
  shape[static_cast<size_t>(dim)] *= tpSize;
  // The owning module answers for its direct parameter.
  size_t dot = qualifiedName.rfind('.');
  std::string owner = dot == std::string::npos ? "" : qualifiedName.substr(0, dot);
  std::string local = dot == std::string::npos ? qualifiedName : qualifiedName.substr(dot + 1);
  for (const auto& entry : root.named_modules()) {
    if (entry.key() != owner) continue;
    const auto* sharded = dynamic_cast<const ShardedModule*>(entry.value().get());
    int64_t unpadded = sharded ? sharded->unpaddedSize(local) : ShardedModule::kNotPadded;
    if (unpadded != ShardedModule::kNotPadded) shape[static_cast<size_t>(dim)] = unpadded;
  }
  return shape;
}

std::vector<std::pair<std::string, at::Tensor>> gatherFullParameters(const torch::nn::Module& root,
                                                                     Communicator& tp) {
  auto dims = shardDims(root);
  std::vector<std::pair<std::string, at::Tensor>> full;
  for (const auto& param : root.named_parameters()) {
    at::Tensor local = param.value().detach();
    int64_t dim = dims.at(param.key());
    if (dim == kReplicated || tp.size() == 1) {
      full.emplace_back(param.key(), local.clone());
      continue;
    }
    // Gather along dim 0 after moving `dim` to the front, then move it back.
    at::Tensor gathered = detail::allGatherFirstDim(local.movedim(dim, 0), tp);
    full.emplace_back(param.key(), gathered.movedim(0, dim).contiguous());
  }
  return full;
}

}  // namespace strata::tensor_parallel

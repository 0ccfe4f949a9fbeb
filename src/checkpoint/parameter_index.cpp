#include "checkpoint/parameter_index.h"

#include <set>

#include "strata/models/model_family.h"
#include "strata/pipeline/split.h"
#include "strata/tensor_parallel/sharding.h"

namespace strata::train {

std::vector<int> layerOwners(const TrainConfig& c, int layers) {
  std::vector<int> stageRanks = pipelineStageRanks(c.parallel);
  int stages = static_cast<int>(stageRanks.size());
  std::vector<int> owners;
  std::vector<int> counts(c.parallel.stageLayers.begin(), c.parallel.stageLayers.end());
  if (counts.empty()) counts = pipeline::evenCounts(layers, stages);
  for (int stage = 0; stage < stages; ++stage) {
    for (int i = 0; i < counts[static_cast<size_t>(stage)]; ++i)
      owners.push_back(stageRanks[static_cast<size_t>(stage)]);
  }
  return owners;
}

std::vector<bool> layersOfPipelineRank(const TrainConfig& config, int layers, int ppRank) {
  std::vector<bool> held;
  for (int owner : layerOwners(config, layers)) held.push_back(owner == ppRank);
  return held;
}

std::vector<std::pair<std::string, at::Tensor>> stageParameters(const torch::nn::Sequential& model,
                                                                const TrainConfig& config,
                                                                int ppRank) {
  std::vector<std::shared_ptr<torch::nn::Module>> children = model->children();
  std::vector<int> owners = layerOwners(config, static_cast<int>(children.size()));
  std::set<c10::TensorImpl*> owned, seen;
  for (size_t i = 0; i < children.size(); ++i) {
    if (owners[i] != ppRank) continue;
    for (const at::Tensor& t : children[i]->parameters()) owned.insert(t.unsafeGetTensorImpl());
  }
  std::vector<std::pair<std::string, at::Tensor>> parameters;
  for (const auto& item : model->named_parameters()) {
    c10::TensorImpl* impl = item.value().unsafeGetTensorImpl();
    if (!owned.count(impl) || !seen.insert(impl).second) continue;
    parameters.emplace_back(item.key(), item.value());
  }
  return parameters;
}

std::vector<IndexedParameter> indexParameters(
    const torch::nn::Module& model, const std::vector<std::pair<std::string, at::Tensor>>& owned,
    const Coord& coord, int tpSize) {
  std::vector<IndexedParameter> indexed;
  for (const auto& [name, tensor] : owned) {
    IndexedParameter p;
    p.name = name;
    p.tensor = tensor;
    p.shardDim = tensor_parallel::shardDimOf(model, name);
    p.globalShape = tensor_parallel::wholeShapeOf(model, name, tensor.sizes(), tpSize);
    // The embedding lives on the first stage; a later one holds a tied copy.
    bool tiedCopy = name == models::kTiedEmbeddingName && coord.pp != 0;
    p.primary = !(p.shardDim == tensor_parallel::kReplicated && coord.tp != 0) && !tiedCopy;
    indexed.push_back(std::move(p));
  }
  return indexed;
}

}  // namespace strata::train

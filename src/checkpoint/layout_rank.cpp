#include "checkpoint/layout_rank.h"

#include <torch/torch.h>

#include "checkpoint/parameter_index.h"
#include "pipeline/held_layers.h"
#include "runtime/shape_communicator.h"
#include "strata/config/model_spec.h"
#include "strata/config/optimizer.h"
#include "strata/models/model_family.h"

namespace strata::train {

LayoutRank buildLayoutRank(const TrainConfig& config, int pp, int tp) {
  models::ModelSpec spec = modelSpecOf(config);
  int tpSize = static_cast<int>(config.parallel.tp);
  LayoutRank rank;
  rank.model = models::modelFamily(spec.architecture)
                   .build(spec, std::make_shared<ShapeCommunicator>(tp, tpSize), nullptr, nullptr,
                          layersOfPipelineRank(config, static_cast<int>(spec.layers + 2), pp));
  auto owned = stageParameters(rank.model, config, pp);
  std::vector<at::Tensor> tensors;
  for (const auto& item : owned) tensors.push_back(item.second);
  rank.optimizer = makeAdamW(tensors, config.train);
  rank.state.model = rank.model.ptr().get();
  rank.state.optimizer = rank.optimizer.get();
  // As the trainer's rank holds them, so its shard saves what the trainer's would.
  rank.state.heldLayers = pipeline::releaseOtherLayers(rank.model, tensors);
  rank.state.parameters = indexParameters(*rank.model, owned, Coord{pp, 0, 0, tp}, tpSize);
  rank.state.tpRank = tp;
  return rank;
}

}  // namespace strata::train

#include "train/loop/whole_model.h"

#include <torch/torch.h>

#include "strata/models/model_family.h"
#include "strata/train/loop/trainer.h"
#include "train/loop/parameter_index.h"
#include "train/loop/shape_communicator.h"

namespace strata::train {

TrainConfig oneProcessConfig(const IndexedCheckpoint& opened) {
  TrainConfig config = opened.config;
  config.parallel.pp = config.parallel.dp = config.parallel.cp = 1;
  config.parallel.tp = config.parallel.ep = 1;
  config.parallel.schedule = "1f1b";  // a V schedule places two stages on a rank
  config.parallel.virtualStages = 1;
  config.parallel.zero = 0;
  config.parallel.stageLayers.clear();
  return config;
}

torch::nn::Sequential loadWholeModel(const IndexedCheckpoint& opened) {
  TrainConfig config = oneProcessConfig(opened);
  models::ModelSpec spec = modelSpecOf(config);
  torch::nn::Sequential model =
      models::modelFamily(spec.architecture).build(spec, std::make_shared<ShapeCommunicator>(0, 1));
  RankState state{model.ptr().get(), nullptr, {}, {}};
  state.parameters = indexParameters(*model, stageParameters(model, config, 0), Coord{}, 1);
  loadResharded(opened.directory, opened.info, state);
  return model;
}

}  // namespace strata::train

#include "train/loop/whole_model.h"

#include <torch/torch.h>

#include <filesystem>

#include "strata/error.h"
#include "strata/models/model_family.h"
#include "strata/train/config/init_from_model.h"
#include "strata/train/loop/hugging_face_import.h"
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

namespace {

// The model of `config` in one process, and the index of its parameters.
struct OneProcessModel {
  torch::nn::Sequential model;
  RankState state;
};

OneProcessModel buildOneProcess(const TrainConfig& config) {
  models::ModelSpec spec = modelSpecOf(config);
  torch::nn::Sequential model =
      models::modelFamily(spec.architecture).build(spec, std::make_shared<ShapeCommunicator>(0, 1));
  RankState state{model.ptr().get(), nullptr, {}, {}};
  state.parameters = indexParameters(*model, stageParameters(model, config, 0), Coord{}, 1);
  return {model, state};
}

}  // namespace

torch::nn::Sequential loadWholeModel(const IndexedCheckpoint& opened) {
  OneProcessModel built = buildOneProcess(oneProcessConfig(opened));
  loadResharded(opened.directory, opened.info, built.state);
  return built.model;
}

torch::nn::Sequential loadHuggingFaceModel(const std::string& weights, TrainConfig& config) {
  if (!std::filesystem::exists(weights))
    throw ConfigError("Hugging Face weights '" + weights + "' do not exist");
  if (!std::filesystem::exists(huggingFaceConfigOf(weights)))
    throw ConfigError("Hugging Face weights '" + weights + "' have no " +
                      huggingFaceConfigOf(weights) + " beside them to say what model they are");
  config = TrainConfig{};
  config.checkpoint.initFrom = weights;
  takeModelFromInitFrom(config, {});
  OneProcessModel built = buildOneProcess(config);
  models::ModelSpec spec = modelSpecOf(config);
  loadHuggingFaceWeights(weights, built.state,
                         *models::modelFamily(spec.architecture).huggingFace(spec));
  return built.model;
}

}  // namespace strata::train

#include "checkpoint/whole_model.h"

#include <torch/torch.h>

#include <filesystem>

#include "checkpoint/parameter_index.h"
#include "runtime/shape_communicator.h"
#include "strata/checkpoint/hugging_face_import.h"
#include "strata/checkpoint/peft_adapter.h"
#include "strata/config/init_from_model.h"
#include "strata/config/model_spec.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"
#include "strata/models/model_family.h"

namespace strata::train {

TrainConfig oneProcessLayout(TrainConfig config) {
  config.parallel.pp = config.parallel.dp = config.parallel.cp = 1;
  config.parallel.tp = config.parallel.ep = 1;
  config.parallel.schedule = "1f1b";  // a V schedule places two stages on a rank
  config.parallel.virtualStages = 1;
  config.parallel.zero = 0;
  config.parallel.stageLayers.clear();
  return config;
}

TrainConfig oneProcessConfig(const IndexedCheckpoint& opened) {
  return oneProcessLayout(opened.config);
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

torch::nn::Sequential loadHuggingFaceModel(const std::string& weights, TrainConfig& config,
                                           const std::string& adapter) {
  if (!std::filesystem::exists(weights))
    throw ConfigError("Hugging Face weights '" + weights + "' do not exist");
  if (!std::filesystem::exists(huggingFaceConfigOf(weights)))
    throw ConfigError("Hugging Face weights '" + weights + "' have no " +
                      huggingFaceConfigOf(weights) + " beside them to say what model they are");
  config = TrainConfig{};
  config.checkpoint.initFrom = weights;
  takeModelFromInitFrom(config, {});
  PeftAdapterConfig read;
  if (!adapter.empty()) {
    if (config.model.architecture != kLlamaArchitecture)
      throw ConfigError("--adapter: LoRA adapters are read for Llama-family weights; '" + weights +
                        "' is " + config.model.architecture);
    read = readAdapterConfig(adapter);
    const tensor_parallel::LoraConfig& lora = read.lora;
    config.finetune.method = "lora";
    config.finetune.rank = lora.adapter.rank;
    config.finetune.alpha = lora.adapter.alpha;
    config.finetune.targets = {lora.targets.begin(), lora.targets.end()};
  }
  OneProcessModel built = buildOneProcess(config);
  models::ModelSpec spec = modelSpecOf(config);
  models::ModelSpec base = spec;
  base.lora = {};
  loadHuggingFaceWeights(weights, built.state,
                         *models::modelFamily(spec.architecture).huggingFace(base));
  if (!adapter.empty())
    loadHuggingFaceWeights((std::filesystem::path(adapter) / kPeftWeightsFile).string(),
                           built.state, *peftAdapterLayout(spec, read.gateUpRank),
                           WeightsOf::kAdapters);
  return built.model;
}

namespace {

// The tokenizer of Hugging Face weights: `tokenizer`, or the one in their
// folder (tokenizerIn).
std::string weightsTokenizer(const std::string& weights, const std::string& tokenizer) {
  if (!tokenizer.empty()) return tokenizer;
  std::string folder = std::filesystem::path(huggingFaceConfigOf(weights)).parent_path().string();
  if (std::optional<std::string> beside = tokenizerIn(folder)) return *beside;
  throw ConfigError("--weights '" + weights +
                    "' has no tokenizer beside it (tokenizer.json, tokenizer.model, or vocab.json "
                    "and merges.txt): give --tokenizer");
}

}  // namespace

torch::nn::Sequential loadInferenceModel(const std::string& checkpoint, const std::string& weights,
                                         const std::string& tokenizer, TrainConfig& config,
                                         const std::string& adapter) {
  if (checkpoint.empty() == weights.empty())
    throw ConfigError(
        "give one of --checkpoint (a training checkpoint) and --weights (Hugging "
        "Face weights)");
  torch::nn::Sequential model;
  if (!checkpoint.empty()) {
    if (!tokenizer.empty())
      throw ConfigError("--tokenizer is for --weights: a checkpoint's run names its tokenizer");
    if (!adapter.empty())
      throw ConfigError("--adapter is for --weights: a LoRA run's checkpoint holds its adapters");
    IndexedCheckpoint opened = openIndexedCheckpoint(checkpoint);
    config = opened.config;
    model = loadWholeModel(opened);
  } else {
    model = loadHuggingFaceModel(weights, config, adapter);
    config.data.tokenizer = weightsTokenizer(weights, tokenizer);
  }
  model->eval();
  return model;
}

}  // namespace strata::train

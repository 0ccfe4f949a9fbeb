#include "strata/train/loop/export_gpt2.h"

#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/atomic_file.h"
#include "strata/formats/safetensors.h"
#include "strata/models/gpt.h"
#include "strata/train/checkpoint/gpt2_layout.h"
#include "strata/train/checkpoint/inspect.h"
#include "strata/train/config/config_file.h"
#include "strata/train/loop/trainer.h"
#include "train/loop/parameter_index.h"
#include "train/loop/shape_communicator.h"

namespace strata::train {
namespace {

// GPT-2's token for both the start and the end of a text, when the
// vocabulary is GPT-2's (or that padded).
constexpr int64_t kGpt2EndOfText = 50256;

// The fields transformers' GPT2Config reads; "gelu_new" is its name for the
// tanh approximation.
std::string huggingFaceConfig(const ModelConfig& m) {
  nlohmann::ordered_json c;
  c["architectures"] = {"GPT2LMHeadModel"};
  c["model_type"] = "gpt2";
  c["vocab_size"] = m.vocab;
  c["n_positions"] = m.context;
  c["n_ctx"] = m.context;
  c["n_embd"] = m.hidden;
  c["n_layer"] = m.layers;
  c["n_head"] = m.heads;
  c["n_inner"] = m.ffn;
  c["activation_function"] = "gelu_new";
  c["layer_norm_epsilon"] = 1e-5;
  c["resid_pdrop"] = m.dropout;
  c["embd_pdrop"] = m.dropout;
  c["attn_pdrop"] = m.dropout;
  c["initializer_range"] = 0.02;
  c["tie_word_embeddings"] = true;
  c["torch_dtype"] = "float32";
  if (m.vocab > kGpt2EndOfText) {
    c["bos_token_id"] = kGpt2EndOfText;
    c["eos_token_id"] = kGpt2EndOfText;
  }
  return c.dump(2) + "\n";
}

}  // namespace

std::string exportCheckpoint(const ExportOptions& o) {
  if (o.format != "safetensors")
    throw ConfigError("unknown format '" + o.format + "' (known: safetensors)");
  std::string source = completeStepDirectory(o.checkpoint);
  CheckpointInfo info = readCheckpointInfo(source);
  if (info.format < 2)
    throw CheckpointError("checkpoint '" + source +
                          "' is format 1, from before Strata indexed its tensors: convert it with "
                          "a Strata of that version's layout first");
  TrainConfig config;
  applyConfigToml(info.configToml, source + "/metadata.toml", config);
  if (config.model.architecture != kGpt2Architecture)
    throw CheckpointError("checkpoint '" + source + "' is of architecture '" +
                          config.model.architecture +
                          "', not gpt2: its weights mean something else in GPT-2 implementations "
                          "(train with --architecture gpt2 to export)");
  config.parallel.pp = config.parallel.dp = config.parallel.tp = 1;
  config.parallel.virtualStages = 1;
  config.parallel.zero = 0;
  config.parallel.stageLayers.clear();

  // The whole model, one process, filled through the tensor index.
  torch::nn::Sequential model =
      models::buildGpt(gptConfigOf(config), std::make_shared<ShapeCommunicator>(0, 1));
  RankState state{model.ptr().get(), nullptr, {}, {}};
  state.parameters = indexParameters(*model, stageParameters(model, config, 0), Coord{}, 1);
  loadResharded(source, info, state);

  const ModelConfig& m = config.model;
  Gpt2Dims dims{m.layers, m.hidden, m.heads, m.ffn, m.vocab, m.context};
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  auto named = model->named_parameters();
  for (const Gpt2Tensor& t : gpt2Tensors(dims)) {
    at::Tensor* ours = named.find(t.strata);
    if (!ours) throw CheckpointError("the model has no parameter '" + t.strata + "' to export");
    tensors.emplace_back(t.huggingFace, toGpt2Layout(t.strata, *ours, m.heads));
  }
  std::filesystem::path folder = std::filesystem::path(o.out).parent_path();
  std::error_code error;
  if (!folder.empty()) std::filesystem::create_directories(folder, error);
  formats::writeSafetensors(o.out, tensors, {{"format", "pt"}});  // transformers requires "format"
  std::string configPath = (folder / "config.json").string();
  formats::writeFileAtomically(configPath, huggingFaceConfig(m));
  return configPath;
}

}  // namespace strata::train

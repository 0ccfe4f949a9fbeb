#include "strata/checkpoint/export_hugging_face.h"

#include <torch/torch.h>

#include <filesystem>

#include "checkpoint/whole_model.h"
#include "formats/atomic_file.h"
#include "strata/checkpoint/peft_adapter.h"
#include "strata/config/model_spec.h"
#include "strata/data/tokenizer.h"
#include "strata/formats/safetensors_set.h"
#include "strata/models/model_family.h"
#include "strata/tensor_parallel/lora.h"

namespace strata::train {
namespace {

// The checkpoint's family's Hugging Face layout, or why there is none.
std::unique_ptr<models::HuggingFaceLayout> layoutOf(const models::ModelSpec& spec,
                                                    const std::string& source) {
  try {
    return models::modelFamily(spec.architecture).huggingFace(spec);
  } catch (const ConfigError& error) {
    throw CheckpointError("checkpoint '" + source + "' is of architecture '" + spec.architecture +
                          "', not gpt2 or llama: " + error.what());
  }
}

// The tensors `layout` names, taken from `model` in Hugging Face's layout.
std::vector<std::pair<std::string, at::Tensor>> tensorsOf(const torch::nn::Sequential& model,
                                                          const models::HuggingFaceLayout& layout) {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  auto named = model->named_parameters();
  for (const models::HuggingFaceTensor& t : layout.tensors()) {
    at::Tensor* ours = named.find(t.strata);
    if (!ours) throw CheckpointError("the model has no parameter '" + t.strata + "' to export");
    tensors.emplace_back(t.huggingFace, layout.toHuggingFace(t.strata, *ours));
  }
  return tensors;
}

// --format peft: the adapters and adapter_config.json into the folder o.out.
ExportedFiles exportAdapter(const ExportOptions& o, const models::ModelSpec& spec,
                            const torch::nn::Sequential& model, const std::string& source) {
  if (!spec.lora.enabled())
    throw ConfigError("--format peft: checkpoint '" + source +
                      "' has no LoRA adapters (its finetune.method is full)");
  std::unique_ptr<models::HuggingFaceLayout> layout = peftAdapterLayout(spec);
  auto named = model->named_parameters();
  auto parameter = [&](const std::string& name) {
    at::Tensor* ours = named.find(name);
    if (!ours) throw CheckpointError("the model has no parameter '" + name + "' to export");
    return *ours;
  };
  std::filesystem::path folder(o.out);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  ExportedFiles files;
  files.weights =
      formats::writeShardedSafetensors((folder / kPeftWeightsFile).string(),
                                       peftAdapterTensors(spec, parameter), {{"format", "pt"}}, 0);
  files.config = (folder / kPeftConfigFile).string();
  formats::writeFileAtomically(files.config, layout->configJson());
  return files;
}

}  // namespace

ExportedFiles exportCheckpoint(const ExportOptions& o) {
  if (o.format != "safetensors" && o.format != "peft")
    throw ConfigError("unknown format '" + o.format + "' (known: safetensors, peft)");
  IndexedCheckpoint opened = openIndexedCheckpoint(o.checkpoint);
  models::ModelSpec spec = modelSpecOf(oneProcessConfig(opened));
  torch::nn::Sequential model = loadWholeModel(opened);
  if (o.format == "peft") return exportAdapter(o, spec, model, opened.directory);
  if (spec.lora.enabled() && !o.mergeAdapter)
    throw ConfigError("checkpoint '" + opened.directory +
                      "' holds LoRA adapters, which a plain model has no place for: "
                      "--merge-adapter writes the model with them merged in, --format peft the "
                      "adapters alone");
  if (!spec.lora.enabled() && o.mergeAdapter)
    throw ConfigError("--merge-adapter: checkpoint '" + opened.directory +
                      "' has no LoRA adapters (its finetune.method is full)");
  if (o.mergeAdapter) {
    tensor_parallel::mergeLoraAdapters(*model, spec.lora.adapter);
    spec.lora = {};  // the merged model's layout is the plain one
  }
  std::unique_ptr<models::HuggingFaceLayout> layout = layoutOf(spec, opened.directory);

  std::vector<std::pair<std::string, at::Tensor>> tensors = tensorsOf(model, *layout);
  std::filesystem::path folder = std::filesystem::path(o.out).parent_path();
  std::error_code error;
  if (!folder.empty()) std::filesystem::create_directories(folder, error);
  ExportedFiles files;
  // transformers requires the "format" metadata.
  files.weights =
      formats::writeShardedSafetensors(o.out, tensors, {{"format", "pt"}}, o.maxShardBytes);
  files.config = (folder / "config.json").string();
  formats::writeFileAtomically(files.config, layout->configJson());
  // The tokenizer the run trained with, where transformers and `strata
  // generate --weights` look for it.
  try {
    files.tokenizer = copyTokenizerFiles(opened.config.data.tokenizer, folder.string());
  } catch (const ConfigError& e) {
    files.tokenizerNotCopied = e.what();
  }
  return files;
}

}  // namespace strata::train

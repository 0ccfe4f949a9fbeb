#include "strata/checkpoint/export_hugging_face.h"

#include <torch/torch.h>

#include <filesystem>

#include "checkpoint/whole_model.h"
#include "formats/atomic_file.h"
#include "strata/config/model_spec.h"
#include "strata/data/tokenizer.h"
#include "strata/formats/safetensors_set.h"
#include "strata/models/model_family.h"

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

}  // namespace

ExportedFiles exportCheckpoint(const ExportOptions& o) {
  if (o.format != "safetensors")
    throw ConfigError("unknown format '" + o.format + "' (known: safetensors)");
  IndexedCheckpoint opened = openIndexedCheckpoint(o.checkpoint);
  models::ModelSpec spec = modelSpecOf(oneProcessConfig(opened));
  std::unique_ptr<models::HuggingFaceLayout> layout = layoutOf(spec, opened.directory);
  torch::nn::Sequential model = loadWholeModel(opened);

  std::vector<std::pair<std::string, at::Tensor>> tensors;
  auto named = model->named_parameters();
  for (const models::HuggingFaceTensor& t : layout->tensors()) {
    at::Tensor* ours = named.find(t.strata);
    if (!ours) throw CheckpointError("the model has no parameter '" + t.strata + "' to export");
    tensors.emplace_back(t.huggingFace, layout->toHuggingFace(t.strata, *ours));
  }
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

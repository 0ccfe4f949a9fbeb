#include "strata/checkpoint/hugging_face_import.h"

#include <torch/torch.h>

#include <map>

#include "checkpoint/tensor_box.h"
#include "strata/formats/safetensors_set.h"
#include "strata/tensor_parallel/lora.h"

namespace strata::train {
namespace {

bool loadableDtype(const std::string& dtype) {
  return dtype == "F32" || dtype == "BF16" || dtype == "F16";
}

// The checks of the files against the model, the same on every rank.
// Returns Strata name -> Hugging Face name.
std::map<std::string, std::string> checkFiles(const formats::SafetensorsSet& files,
                                              const models::HuggingFaceLayout& layout) {
  auto fail = [&](const std::string& file, const std::string& problem) {
    throw formats::SafetensorsError("safetensors file '" + file + "': " + problem);
  };
  std::map<std::string, std::string> huggingFaceOf;
  std::map<std::string, const models::HuggingFaceTensor*> wanted;
  std::vector<models::HuggingFaceTensor> tensors = layout.tensors();
  for (const models::HuggingFaceTensor& t : tensors) {
    huggingFaceOf[t.strata] = t.huggingFace;
    wanted[t.huggingFace] = &t;
  }
  for (const auto& [name, entry] : files.entries()) {
    if (!wanted.count(name) && !layout.ignorable(name))
      fail(files.fileOf(name), "holds '" + name + "', which this " + layout.architecture() + " (" +
                                   std::to_string(tensors.size()) + " tensors) has no place for");
  }
  for (const models::HuggingFaceTensor& t : tensors) {
    auto found = files.entries().find(t.huggingFace);
    if (found == files.entries().end())
      fail(files.path(), "lacks '" + t.huggingFace + "' (this model's '" + t.strata + "')");
    const std::string& file = files.fileOf(t.huggingFace);
    if (found->second.shape != t.shape)
      fail(file, "'" + t.huggingFace + "' has shape " + shapeText(found->second.shape) +
                     ", this model needs " + shapeText(t.shape));
    if (!loadableDtype(found->second.dtype))
      fail(file, "'" + t.huggingFace + "' has dtype " + found->second.dtype +
                     ", which does not load into float32 parameters (F32, BF16 and F16 do)");
  }
  return huggingFaceOf;
}

}  // namespace

void loadHuggingFaceWeights(const std::string& path, const RankState& state,
                            const models::HuggingFaceLayout& layout, WeightsOf weights) {
  formats::SafetensorsSet files(path);
  std::map<std::string, std::string> huggingFaceOf = checkFiles(files, layout);
  torch::NoGradGuard noGrad;
  for (const IndexedParameter& p : state.parameters) {
    // LoRA adapters are not the model's, nor the model's weights an adapter's.
    if (tensor_parallel::isLoraParameter(p.name) != (weights == WeightsOf::kAdapters)) continue;
    auto name = huggingFaceOf.find(p.name);
    if (name == huggingFaceOf.end())
      throw formats::SafetensorsError(layout.architecture() +
                                      "'s layout has no tensor for this model's '" + p.name + "'");
    ShardBox box = shardBox(p, state.tpRank);
    if (box.empty()) continue;
    at::Tensor block = layout.blockOf(p.name, files.view(name->second), box.offset,
                                      box.length);  // this rank's slice, read from the mapping
    at::Tensor target = p.tensor.detach();
    for (size_t d = 0; d < box.length.size(); ++d)
      target = target.narrow(static_cast<int64_t>(d), 0, box.length[d]);
    target.copy_(block);  // converts bfloat16 and float16 to float32
  }
}

}  // namespace strata::train

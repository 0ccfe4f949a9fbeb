#include "strata/train/checkpoint/gpt2_import.h"

#include <torch/torch.h>

#include <map>

#include "strata/formats/safetensors.h"
#include "train/checkpoint/tensor_box.h"

namespace strata::train {
namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Tensors GPT-2 files may carry that are no parameters of the model: the
// head tied to wte (some writers save it anyway) and older transformers'
// causal-mask buffers.
bool ignorable(const std::string& name) {
  return name == "lm_head.weight" || endsWith(name, ".attn.bias") ||
         endsWith(name, ".attn.masked_bias");
}

// The checks of the file against the model, the same on every rank.
std::map<std::string, std::string> checkFile(const formats::SafetensorsFile& file,
                                             const Gpt2Dims& dims) {
  auto fail = [&](const std::string& problem) {
    throw formats::SafetensorsError("safetensors file '" + file.path() + "': " + problem);
  };
  std::map<std::string, std::string> huggingFaceOf;
  std::map<std::string, const Gpt2Tensor*> wanted;
  std::vector<Gpt2Tensor> tensors = gpt2Tensors(dims);
  for (const Gpt2Tensor& t : tensors) {
    huggingFaceOf[t.strata] = t.huggingFace;
    wanted[t.huggingFace] = &t;
  }
  for (const auto& [name, entry] : file.entries()) {
    if (!wanted.count(name) && !ignorable(name))
      fail("holds '" + name + "', which this model (" + std::to_string(dims.layers) +
           " layers, architecture gpt2) has no place for");
  }
  for (const Gpt2Tensor& t : tensors) {
    auto found = file.entries().find(t.huggingFace);
    if (found == file.entries().end())
      fail("lacks '" + t.huggingFace + "' (this model's '" + t.strata + "')");
    if (found->second.shape != t.shape)
      fail("'" + t.huggingFace + "' has shape " + shapeText(found->second.shape) +
           ", this model needs " + shapeText(t.shape));
    if (found->second.dtype != "F32")
      fail("'" + t.huggingFace + "' has dtype " + found->second.dtype +
           ", this model's parameters are F32 (float32)");
  }
  return huggingFaceOf;
}

}  // namespace

void loadGpt2Safetensors(const std::string& path, const RankState& state, const Gpt2Dims& dims) {
  formats::SafetensorsFile file(path);
  std::map<std::string, std::string> huggingFaceOf = checkFile(file, dims);
  torch::NoGradGuard noGrad;
  for (const IndexedParameter& p : state.parameters) {
    auto name = huggingFaceOf.find(p.name);
    if (name == huggingFaceOf.end())
      throw formats::SafetensorsError("the GPT-2 layout has no tensor for this model's '" + p.name +
                                      "'");
    ShardBox box = shardBox(p, state.tpRank);
    if (box.empty()) continue;
    at::Tensor block = gpt2BlockOf(p.name, file.view(name->second), dims.heads, box.offset,
                                   box.length);  // this rank's slice, read from the mapping
    at::Tensor target = p.tensor.detach();
    for (size_t d = 0; d < box.length.size(); ++d)
      target = target.narrow(static_cast<int64_t>(d), 0, box.length[d]);
    target.copy_(block);
  }
}

}  // namespace strata::train

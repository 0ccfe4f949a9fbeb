// A model family's Hugging Face format: which Hugging Face tensor holds
// which Strata parameter, how each is laid out, and the config.json that
// transformers reads. Export writes every parameter through toHuggingFace;
// import reads each rank's block of each parameter through blockOf, so a
// rank copies only its tensor-parallel slice out of a memory-mapped file.
//
// A layout is made by ModelFamily::huggingFace(spec) (model_family.h). Pure
// tensor arithmetic and text: nothing blocks; nothing throws but the
// family's huggingFace() for an architecture without an equivalent.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata::models {

struct HuggingFaceTensor {
  std::string strata;          // "block0.attention.q.weight"
  std::string huggingFace;     // "model.layers.0.self_attn.q_proj.weight"
  std::vector<int64_t> shape;  // Hugging Face's
};

class HuggingFaceLayout {
 public:
  virtual ~HuggingFaceLayout() = default;
  // transformers' class name, for messages: "GPT2LMHeadModel".
  virtual std::string architecture() const = 0;
  // Every parameter of the model, in the model's order.
  virtual std::vector<HuggingFaceTensor> tensors() const = 0;
  // Tensors files of this family may carry that are no parameters (a tied
  // head saved anyway, old attention buffers): skipped on import.
  virtual bool ignorable(const std::string& huggingFaceName) const = 0;
  // A whole (unpadded) Strata parameter in Hugging Face's layout, contiguous.
  virtual at::Tensor toHuggingFace(const std::string& strataName,
                                   const at::Tensor& whole) const = 0;
  // The elements at `offset`, `length` (per dimension, in Strata's layout of
  // the whole parameter) read from Hugging Face tensor `t`, contiguous; only
  // the block's elements are read, so `t` may view a mapped file.
  virtual at::Tensor blockOf(const std::string& strataName, const at::Tensor& t,
                             const std::vector<int64_t>& offset,
                             const std::vector<int64_t>& length) const = 0;
  // config.json: the fields transformers' config class reads.
  virtual std::string configJson() const = 0;
};

// The [model] settings a transformers config.json describes, as TOML text in
// Strata's keys ("[model]\narchitecture = \"llama\"\nlayers = 16\n..." and
// [model.moe] for Mixtral), for the model types Strata reads: gpt2, llama and
// mixtral. Throws ConfigError naming `source` and the field for text that is
// not a JSON object, another model_type, a missing or invalid size, or a
// setting Strata's model does not compute (rope_scaling other than llama3,
// biases, another activation): weights loaded into a model that computes
// otherwise would start training from a broken model.
std::string modelTomlOfHuggingFaceConfig(const std::string& configJson, const std::string& source);

// The block of a tensor already in Strata's layout: `t` narrowed along
// every dimension from `firstDim` on, contiguous.
at::Tensor narrowedBlock(at::Tensor t, const std::vector<int64_t>& offset,
                         const std::vector<int64_t>& length, int64_t firstDim = 0);

}  // namespace strata::models

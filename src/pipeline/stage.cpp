#include "strata/pipeline/stage.h"

#include <torch/torch.h>

#include "strata/error.h"

namespace strata::pipeline {

Stage::Stage(int index, int firstLayer, LayerList layers, at::Device device)
    : index_(index), firstLayer_(firstLayer), layers_(std::move(layers)), device_(device) {
  if (layers_.empty()) {
    throw ConfigError("pipeline stage " + std::to_string(index) + " has no layers");
  }
  for (torch::nn::AnyModule& layer : layers_) layer.ptr()->to(device_);
}

at::Tensor Stage::forward(const at::Tensor& input, int64_t* activationBytes) const {
  at::Tensor x = input;
  for (size_t k = 0; k < layers_.size(); ++k) {
    // AnyModule::forward is not const; the module it points to is shared.
    auto& layer = const_cast<torch::nn::AnyModule&>(layers_[k]);
    if (layerCall_) {
      x = layerCall_(firstLayer_ + static_cast<int>(k), x,
                     [&](const at::Tensor& in) { return layer.forward(in); });
    } else {
      x = layer.forward(x);
    }
    if (activationBytes) *activationBytes += x.numel() * x.element_size();
  }
  return x;
}

std::vector<at::Tensor> Stage::parameters() const {
  std::vector<at::Tensor> result;
  for (const torch::nn::AnyModule& layer : layers_) {
    for (const at::Tensor& parameter : layer.ptr()->parameters()) {
      if (parameter.requires_grad()) result.push_back(parameter);
    }
  }
  return result;
}

std::vector<at::Tensor> Stage::heldParameters() const {
  std::vector<at::Tensor> result;
  for (const torch::nn::AnyModule& layer : layers_) {
    std::vector<at::Tensor> own = layer.ptr()->parameters();
    result.insert(result.end(), own.begin(), own.end());
  }
  return result;
}

std::vector<at::Tensor> Stage::buffers() const {
  std::vector<at::Tensor> result;
  for (const torch::nn::AnyModule& layer : layers_) {
    for (const at::Tensor& buffer : layer.ptr()->buffers()) result.push_back(buffer);
  }
  return result;
}

}  // namespace strata::pipeline

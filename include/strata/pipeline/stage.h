// A pipeline stage: a contiguous slice of a model's layers placed on one device.
//
// Stages share the user's modules (no copies), so training a stage trains the
// model it was cut from. Nothing here blocks or communicates; the constructor
// throws ConfigError for an empty slice, and moves the layers to `device`.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/any.h>

#include <cstdint>
#include <vector>

namespace strata::pipeline {

using LayerList = std::vector<torch::nn::AnyModule>;

class Stage {
 public:
  // `layers` are the model's layers [firstLayer, firstLayer + layers.size()).
  Stage(int index, int firstLayer, LayerList layers, at::Device device);

  int index() const { return index_; }
  int firstLayer() const { return firstLayer_; }
  int numLayers() const { return static_cast<int>(layers_.size()); }
  at::Device device() const { return device_; }
  const LayerList& layers() const { return layers_; }

  // y = L_{k-1}(... L_1(L_0(x))). When `activationBytes` is given it receives
  // the bytes of every layer output produced, what autograd keeps alive for
  // backward in a chain of simple layers.
  at::Tensor forward(const at::Tensor& input, int64_t* activationBytes = nullptr) const;
  // The parameters that take gradients, in layer order.
  std::vector<at::Tensor> parameters() const;
  // Every layer's buffers, in layer order.
  std::vector<at::Tensor> buffers() const;

 private:
  int index_;
  int firstLayer_;
  LayerList layers_;
  at::Device device_;
};

}  // namespace strata::pipeline

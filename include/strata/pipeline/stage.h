// A pipeline stage: a contiguous slice of a model's layers placed on one device.
//
// Stages share the user's modules (no copies), so training a stage trains the
// model it was cut from. Nothing here blocks or communicates; the constructor
// throws ConfigError for an empty slice, and moves the layers to `device`.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/any.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace strata::pipeline {

using LayerList = std::vector<torch::nn::AnyModule>;
// A layer's forward of its input.
using LayerBody = std::function<at::Tensor(const at::Tensor& input)>;
// Runs model layer `layer`'s forward, `run`, on `input` and returns its
// output: a place for a wrapper to act around each layer (fully sharded data
// parallelism gathers the layer's parameters there, and may hand `run` its
// input passed through a node of its own).
using LayerCall =
    std::function<at::Tensor(int layer, const at::Tensor& input, const LayerBody& run)>;

class Stage {
 public:
  // `layers` are the model's layers [firstLayer, firstLayer + layers.size()).
  Stage(int index, int firstLayer, LayerList layers, at::Device device);

  int index() const { return index_; }
  int firstLayer() const { return firstLayer_; }
  int numLayers() const { return static_cast<int>(layers_.size()); }
  at::Device device() const { return device_; }
  const LayerList& layers() const { return layers_; }
  // Every later forward() runs each layer through `call` (empty: directly).
  void setLayerCall(LayerCall call) { layerCall_ = std::move(call); }

  // y = L_{k-1}(... L_1(L_0(x))). When `activationBytes` is given it receives
  // the bytes of every layer output produced, what autograd keeps alive for
  // backward in a chain of simple layers.
  at::Tensor forward(const at::Tensor& input, int64_t* activationBytes = nullptr) const;
  // The parameters that take gradients, in layer order.
  std::vector<at::Tensor> parameters() const;
  // Every parameter, frozen ones (requires_grad false) included, in layer order.
  std::vector<at::Tensor> heldParameters() const;
  // Every layer's buffers, in layer order.
  std::vector<at::Tensor> buffers() const;

 private:
  int index_;
  int firstLayer_;
  LayerList layers_;
  at::Device device_;
  LayerCall layerCall_;
};

}  // namespace strata::pipeline

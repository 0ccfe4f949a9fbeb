// What the parallel-equals-serial tests need of an independent reference
// model, whatever its family: weights in and out under Strata's names, and
// the loss of a micro-batch. Implemented by ReferenceGpt and ReferenceLlama,
// plain LibTorch that calls no Strata layer.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata::testing {

class ReferenceModel {
 public:
  virtual ~ReferenceModel() = default;
  // Copies every weight from a one-process Strata model's named parameters;
  // throws std::runtime_error for a name the model lacks or leaves over.
  virtual void load(const std::map<std::string, torch::Tensor>& strataWeights) = 0;
  // Mean next-token cross-entropy of ids against targets [b, s];
  // `dropoutCall` numbers the micro-batch for seeded dropout (if any).
  virtual torch::Tensor loss(const torch::Tensor& ids, const torch::Tensor& targets,
                             int64_t dropoutCall, bool training) = 0;
  // The sum of the next-token cross-entropy over the targets that are not
  // -1 (a loss mask's left-out targets), for a loss that a caller divides by
  // the count of a whole global batch.
  virtual torch::Tensor maskedLossSum(const torch::Tensor& ids, const torch::Tensor& targets,
                                      int64_t dropoutCall, bool training) = 0;
  // The routing terms (load balance and z-loss, weighted by their
  // coefficients) of the last loss() call, which training adds to the loss
  // it differentiates; undefined for a model without experts.
  virtual torch::Tensor routingLoss() const { return torch::Tensor(); }
  // Every trainable tensor, for an optimizer.
  virtual std::vector<torch::Tensor> trainable() const = 0;
  // The weights under Strata's names and layouts, detached copies.
  virtual std::map<std::string, torch::Tensor> parameters() const = 0;
};

}  // namespace strata::testing

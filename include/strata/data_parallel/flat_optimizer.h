// Optimizer updates over flat 1-D segments, for ZeRO: a rank updates only the
// chunks of the flattened parameters it owns, so the update must work on
// arbitrary slices rather than on whole parameters. The arithmetic is that
// of torch::optim::AdamW and torch::optim::SGD, operation for
// operation, so a sharded step equals an unsharded one.
//
// Nothing blocks or communicates. allocate() throws ConfigError for bad
// hyper-parameters; update() expects 1-D tensors of the allocated segment size.
// saveState() / loadState() carry a rank's state through a checkpoint.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "strata/data_parallel/replica_sync.h"

namespace strata::data_parallel {

class FlatOptimizer {
 public:
  virtual ~FlatOptimizer() = default;
  // Creates the state for segments of the given element counts.
  virtual void allocate(const std::vector<int64_t>& segmentNumels,
                        const at::TensorOptions& type) = 0;
  // Called once per optimizer step, before the segments' updates.
  virtual void beginStep() {}
  // param -= update(grad, state of `segment`), in place.
  virtual void update(size_t segment, at::Tensor& param, const at::Tensor& grad) = 0;
  // Bytes of optimizer state this rank holds.
  virtual int64_t stateBytes() const = 0;
  // For learning-rate schedules: the rate of the next update() calls.
  virtual void setLearningRate(double lr) = 0;
  // Checkpointing: this rank's state by name ("exp_avg.3", "step", ...);
  // the tensors alias the live state, counters are fresh copies.
  virtual std::vector<NamedTensor> saveState() const = 0;
  // Restores what saveState() returned; ConfigError names an entry that is
  // missing or has another shape.
  virtual void loadState(const std::vector<NamedTensor>& saved) = 0;
};

struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 1e-2;
};

// Decoupled weight decay, then Adam with bias correction:
//   p <- p (1 - lr wd)
//   m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
//   p <- p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
class FlatAdamW : public FlatOptimizer {
 public:
  explicit FlatAdamW(AdamWConfig config);
  void allocate(const std::vector<int64_t>& segmentNumels, const at::TensorOptions& type) override;
  void beginStep() override { ++step_; }
  void update(size_t segment, at::Tensor& param, const at::Tensor& grad) override;
  int64_t stateBytes() const override;
  void setLearningRate(double lr) override { config_.lr = lr; }
  std::vector<NamedTensor> saveState() const override;
  void loadState(const std::vector<NamedTensor>& saved) override;

 private:
  AdamWConfig config_;
  int64_t step_ = 0;
  std::vector<at::Tensor> expAvg_;    // m, per segment
  std::vector<at::Tensor> expAvgSq_;  // v, per segment
};

struct SgdConfig {
  double lr = 1e-2;
  double momentum = 0;
  double dampening = 0;
  double weightDecay = 0;
  bool nesterov = false;
};

// d = g + wd p;  b <- d on the first step, else momentum b + (1 - dampening) d;
// d <- nesterov ? d + momentum b : b;  p <- p - lr d.
class FlatSgd : public FlatOptimizer {
 public:
  explicit FlatSgd(SgdConfig config);
  void allocate(const std::vector<int64_t>& segmentNumels, const at::TensorOptions& type) override;
  void update(size_t segment, at::Tensor& param, const at::Tensor& grad) override;
  int64_t stateBytes() const override;
  void setLearningRate(double lr) override { config_.lr = lr; }
  std::vector<NamedTensor> saveState() const override;
  void loadState(const std::vector<NamedTensor>& saved) override;

 private:
  SgdConfig config_;
  std::vector<at::Tensor> momentum_;  // per segment, empty without momentum
  std::vector<char> started_;         // per segment: momentum buffer initialised
};

}  // namespace strata::data_parallel

#include "strata/data_parallel/flat_optimizer.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "strata/error.h"
#include "strata/optim/adamw_update.h"

namespace strata::data_parallel {
namespace {

void requirePositive(double value, const char* name) {
  if (!(value > 0))
    throw ConfigError(std::string(name) + " must be > 0, got " + std::to_string(value));
}

void requireNonNegative(double value, const char* name) {
  if (!(value >= 0)) {
    throw ConfigError(std::string(name) + " must be >= 0, got " + std::to_string(value));
  }
}

void requireUnitInterval(double value, const char* name) {
  if (!(value >= 0 && value < 1)) {
    throw ConfigError(std::string(name) + " must be in [0, 1), got " + std::to_string(value));
  }
}

int64_t bytesOf(const std::vector<at::Tensor>& tensors) {
  int64_t bytes = 0;
  for (const at::Tensor& t : tensors) bytes += t.numel() * t.element_size();
  return bytes;
}

std::string indexed(const char* name, size_t i) { return name + ("." + std::to_string(i)); }

const at::Tensor& entry(const std::vector<NamedTensor>& saved, const std::string& name,
                        at::IntArrayRef sizes) {
  for (const NamedTensor& item : saved) {
    if (item.name != name) continue;
    if (item.tensor.sizes() != sizes) {
      throw ConfigError("optimizer state '" + name + "' has " +
                        std::to_string(item.tensor.numel()) + " elements in the saved state, " +
                        std::to_string(c10::multiply_integers(sizes)) + " here");
    }
    return item.tensor;
  }
  throw ConfigError("the saved optimizer state lacks '" + name + "'");
}

at::Tensor counter(int64_t value) { return torch::tensor(value, torch::kLong); }

}  // namespace

FlatAdamW::FlatAdamW(AdamWConfig config) : config_(config) {
  requirePositive(config.lr, "AdamW lr");
  requirePositive(config.eps, "AdamW eps");
  requireUnitInterval(config.beta1, "AdamW beta1");
  requireUnitInterval(config.beta2, "AdamW beta2");
  requireNonNegative(config.weightDecay, "AdamW weight decay");
}

void FlatAdamW::allocate(const std::vector<int64_t>& segmentNumels, const at::TensorOptions& type) {
  for (int64_t n : segmentNumels) {
    expAvg_.push_back(torch::zeros({n}, type));
    expAvgSq_.push_back(torch::zeros({n}, type));
  }
}

void FlatAdamW::update(size_t segment, at::Tensor& param, const at::Tensor& grad) {
  torch::NoGradGuard noGrad;
  optim::adamwUpdate(
      param, grad, expAvg_[segment], expAvgSq_[segment],
      {config_.lr, config_.beta1, config_.beta2, config_.eps, config_.weightDecay, step_});
}

int64_t FlatAdamW::stateBytes() const { return bytesOf(expAvg_) + bytesOf(expAvgSq_); }

std::vector<NamedTensor> FlatAdamW::saveState() const {
  std::vector<NamedTensor> state{{"step", counter(step_)}};
  for (size_t i = 0; i < expAvg_.size(); ++i) {
    state.push_back({indexed("exp_avg", i), expAvg_[i]});
    state.push_back({indexed("exp_avg_sq", i), expAvgSq_[i]});
  }
  return state;
}

void FlatAdamW::loadState(const std::vector<NamedTensor>& saved) {
  torch::NoGradGuard noGrad;
  int64_t step = entry(saved, "step", {}).item<int64_t>();
  for (size_t i = 0; i < expAvg_.size(); ++i) {
    expAvg_[i].copy_(entry(saved, indexed("exp_avg", i), expAvg_[i].sizes()));
    expAvgSq_[i].copy_(entry(saved, indexed("exp_avg_sq", i), expAvgSq_[i].sizes()));
  }
  step_ = step;
}

FlatSgd::FlatSgd(SgdConfig config) : config_(config) {
  requirePositive(config.lr, "SGD lr");
  requireNonNegative(config.momentum, "SGD momentum");
  requireNonNegative(config.weightDecay, "SGD weight decay");
  requireNonNegative(config.dampening, "SGD dampening");
  if (config.nesterov && (config.momentum <= 0 || config.dampening != 0)) {
    throw ConfigError("SGD Nesterov momentum needs momentum > 0 and dampening 0, got momentum " +
                      std::to_string(config.momentum) + " and dampening " +
                      std::to_string(config.dampening));
  }
}

void FlatSgd::allocate(const std::vector<int64_t>& segmentNumels, const at::TensorOptions& type) {
  if (config_.momentum == 0) return;
  for (int64_t n : segmentNumels) momentum_.push_back(torch::zeros({n}, type));
  started_.assign(segmentNumels.size(), 0);
}

void FlatSgd::update(size_t segment, at::Tensor& param, const at::Tensor& grad) {
  torch::NoGradGuard noGrad;
  at::Tensor direction = grad;
  if (config_.weightDecay != 0) direction = direction.add(param, config_.weightDecay);
  if (config_.momentum != 0) {
    at::Tensor& buffer = momentum_[segment];
    if (!started_[segment]) {
      buffer.copy_(direction);
      started_[segment] = 1;
    } else {
      buffer.mul_(config_.momentum).add_(direction, 1 - config_.dampening);
    }
    direction = config_.nesterov ? direction.add(buffer, config_.momentum) : buffer;
  }
  param.add_(direction, -config_.lr);
}

int64_t FlatSgd::stateBytes() const { return bytesOf(momentum_); }

std::vector<NamedTensor> FlatSgd::saveState() const {
  std::vector<int64_t> started(started_.begin(), started_.end());
  std::vector<NamedTensor> state{{"started", torch::tensor(started, torch::kLong)}};
  for (size_t i = 0; i < momentum_.size(); ++i) {
    state.push_back({indexed("momentum", i), momentum_[i]});
  }
  return state;
}

void FlatSgd::loadState(const std::vector<NamedTensor>& saved) {
  torch::NoGradGuard noGrad;
  int64_t segments = static_cast<int64_t>(started_.size());
  at::Tensor started = entry(saved, "started", {segments});
  for (size_t i = 0; i < momentum_.size(); ++i) {
    momentum_[i].copy_(entry(saved, indexed("momentum", i), momentum_[i].sizes()));
  }
  for (int64_t i = 0; i < segments; ++i) started_[i] = started[i].item<int64_t>() != 0;
}

}  // namespace strata::data_parallel

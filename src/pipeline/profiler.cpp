#include "strata/pipeline/profiler.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "strata/error.h"

namespace strata::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Kernels on an accelerator run asynchronously; copying one element back
// waits for them, so the clock measures the work and not its launch.
void waitForDevice(const at::Tensor& tensor) {
  if (!tensor.device().is_cpu() && tensor.numel() > 0) tensor.flatten()[0].item();
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Profiles one layer on `input`, with `loss` of its output when given;
// returns its output for the next layer.
at::Tensor profileLayer(torch::nn::AnyModule& layer, const at::Tensor& input,
                        const ProfileOptions& options,
                        const std::function<at::Tensor(const at::Tensor&)>& loss,
                        LayerProfile& profile) {
  at::Tensor x = input.detach();
  if (x.is_floating_point()) x.requires_grad_(true);
  std::vector<double> forwardTimes, backwardTimes;
  at::Tensor y;
  for (int run = 0; run < options.warmup + options.repetitions; ++run) {
    Clock::time_point start = Clock::now();
    y = layer.forward(x);
    at::Tensor timed = loss ? loss(y) : y;
    waitForDevice(timed);
    double forwardSeconds = secondsSince(start);
    at::Tensor seed = torch::ones_like(timed);
    start = Clock::now();
    if (timed.requires_grad()) torch::autograd::backward({timed}, {seed});
    waitForDevice(x.grad().defined() ? x.grad() : timed);
    double backwardSeconds = secondsSince(start);
    if (x.grad().defined()) x.mutable_grad() = at::Tensor();
    if (run >= options.warmup) {
      forwardTimes.push_back(forwardSeconds);
      backwardTimes.push_back(backwardSeconds);
    }
  }
  profile.forwardSeconds = median(forwardTimes);
  profile.backwardSeconds = median(backwardTimes);
  profile.activationBytes = y.numel() * y.element_size();
  for (at::Tensor& parameter : layer.ptr()->parameters()) {
    profile.parameterBytes += parameter.numel() * parameter.element_size();
    parameter.mutable_grad() = at::Tensor();
  }
  return y.detach();
}

}  // namespace

std::vector<LayerProfile> profileLayers(const LayerList& layers, const at::Tensor& sampleMicrobatch,
                                        at::Device device, const ProfileOptions& options) {
  if (layers.empty()) throw ConfigError("profileLayers: the model has no layers");
  if (!sampleMicrobatch.defined()) {
    throw ConfigError("profileLayers needs a sample micro-batch (PipelineOptions::profileInput)");
  }
  if (options.repetitions < 1 || options.warmup < 0) {
    throw ConfigError("profileLayers: repetitions must be >= 1 and warmup >= 0, got " +
                      std::to_string(options.repetitions) + " and " +
                      std::to_string(options.warmup));
  }
  std::vector<LayerProfile> profiles(layers.size());
  at::Tensor x = sampleMicrobatch.to(device);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    torch::nn::AnyModule layer = layers[i];
    layer.ptr()->to(device);
    bool last = i + 1 == layers.size();
    x = profileLayer(layer, x, options, last ? options.lastLayerLoss : nullptr, profiles[i]);
  }
  return profiles;
}

std::vector<plan::LayerCost> toLayerCosts(const std::vector<LayerProfile>& profiles,
                                          int stashedMicrobatches) {
  std::vector<plan::LayerCost> costs;
  for (const LayerProfile& p : profiles) {
    costs.push_back(
        plan::LayerCost{p.forwardSeconds + p.backwardSeconds,
                        2.0 * p.parameterBytes + double(stashedMicrobatches) * p.activationBytes});
  }
  return costs;
}

std::string formatPartition(const plan::Partition& partition) {
  std::ostringstream out;
  char line[160];
  std::snprintf(line, sizeof line, "%-6s %-14s %14s %12s\n", "stage", "layers", "predicted ms",
                "memory MiB");
  out << line;
  for (std::size_t s = 0; s < partition.stages.size(); ++s) {
    const plan::StageReport& stage = partition.stages[s];
    std::string layers = std::to_string(stage.firstLayer) + "-" +
                         std::to_string(stage.firstLayer + stage.numLayers - 1) + " (" +
                         std::to_string(stage.numLayers) + ")";
    std::snprintf(line, sizeof line, "%-6zu %-14s %14.3f %12.3f\n", s, layers.c_str(),
                  stage.seconds * 1e3, stage.bytes / (1024.0 * 1024.0));
    out << line;
  }
  std::snprintf(line, sizeof line, "slowest stage: %.3f ms\n", partition.slowestSeconds() * 1e3);
  out << line;
  return out.str();
}

}  // namespace strata::pipeline

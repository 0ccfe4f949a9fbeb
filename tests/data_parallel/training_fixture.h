// Shared pieces of the parallel-equals-serial tests: a small MLP, a fixed
// data set, and one-process reference training on the global batch.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "strata/data_parallel/flat_optimizer.h"

namespace strata::data_parallel::testing {

constexpr int kSteps = 5;
constexpr int64_t kGlobalBatch = 16;
constexpr int64_t kInputs = 6;
constexpr int64_t kOutputs = 3;

// Linear(6,16) -> tanh -> Linear(16,16) -> tanh -> Linear(16,3); with
// `withUnused` a fourth Linear that forward never calls.
struct Mlp : torch::nn::Module {
  Mlp(uint64_t seed, bool withUnused);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear first{nullptr}, second{nullptr}, last{nullptr}, unused{nullptr};
};

// Inputs [kSteps, kGlobalBatch, kInputs] and targets [kSteps, kGlobalBatch, kOutputs].
struct Dataset {
  torch::Tensor inputs;
  torch::Tensor targets;
};
Dataset makeDataset(uint64_t seed = 7);

// Rows of step `step` that replica `rank` of `replicas` reads.
torch::Tensor shardOf(const torch::Tensor& batch, int rank, int replicas);

struct TrainResult {
  std::vector<double> losses;  // mean loss over the global batch, per step
  std::vector<torch::Tensor> params;
};

using OptimizerFactory =
    std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)>;
OptimizerFactory adamW();
OptimizerFactory sgdMomentum();
// Strata's flat optimizers with the same hyper-parameters.
std::unique_ptr<FlatOptimizer> flatAdamW();
std::unique_ptr<FlatOptimizer> flatSgdMomentum();

// One process, whole global batch, kSteps optimizer steps.
TrainResult trainSerial(Mlp& model, const Dataset& data, const OptimizerFactory& makeOptimizer);

std::vector<torch::Tensor> snapshot(torch::nn::Module& model);

// Largest absolute difference between corresponding tensors.
double maxDifference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b);

}  // namespace strata::data_parallel::testing

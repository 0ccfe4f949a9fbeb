#include "training_fixture.h"

#include <algorithm>

namespace strata::data_parallel::testing {

Mlp::Mlp(uint64_t seed, bool withUnused) {
  torch::manual_seed(seed);
  first = register_module("first", torch::nn::Linear(kInputs, 16));
  second = register_module("second", torch::nn::Linear(16, 16));
  last = register_module("last", torch::nn::Linear(16, kOutputs));
  if (withUnused) unused = register_module("unused", torch::nn::Linear(16, 16));
}

torch::Tensor Mlp::forward(const torch::Tensor& x) {
  return last(torch::tanh(second(torch::tanh(first(x)))));
}

Dataset makeDataset(uint64_t seed) {
  torch::manual_seed(seed);
  return {torch::randn({kSteps, kGlobalBatch, kInputs}),
          torch::randn({kSteps, kGlobalBatch, kOutputs})};
}

torch::Tensor shardOf(const torch::Tensor& batch, int rank, int replicas) {
  int64_t rows = batch.size(0) / replicas;
  return batch.narrow(0, rank * rows, rows);
}

OptimizerFactory adamW() {
  return [](std::vector<torch::Tensor> params) {
    return std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(1e-2).weight_decay(0.05));
  };
}

std::unique_ptr<FlatOptimizer> flatAdamW() {
  AdamWConfig config;
  config.lr = 1e-2;
  config.weightDecay = 0.05;
  return std::make_unique<FlatAdamW>(config);
}

std::unique_ptr<FlatOptimizer> flatSgdMomentum() {
  SgdConfig config;
  config.lr = 0.1;
  config.momentum = 0.9;
  config.weightDecay = 0.01;
  return std::make_unique<FlatSgd>(config);
}

OptimizerFactory sgdMomentum() {
  return [](std::vector<torch::Tensor> params) {
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.01));
  };
}

TrainResult trainSerial(Mlp& model, const Dataset& data, const OptimizerFactory& makeOptimizer) {
  auto optimizer = makeOptimizer(model.parameters());
  TrainResult result;
  for (int step = 0; step < kSteps; ++step) {
    optimizer->zero_grad();
    torch::Tensor loss = torch::mse_loss(model.forward(data.inputs[step]), data.targets[step]);
    loss.backward();
    optimizer->step();
    result.losses.push_back(loss.item<double>());
  }
  result.params = snapshot(model);
  return result;
}

std::vector<torch::Tensor> snapshot(torch::nn::Module& model) {
  std::vector<torch::Tensor> copies;
  for (const torch::Tensor& p : model.parameters()) copies.push_back(p.detach().clone());
  return copies;
}

double maxDifference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  }
  return worst;
}

}  // namespace strata::data_parallel::testing

// Shared by the pipeline tests: a tiny MLP, deterministic data, the serial
// reference trainer, and the parallel-equals-serial comparison.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "strata/pipeline/pipeline.h"

namespace strata::pipeline::testing {

constexpr int kWidth = 6;
constexpr int kLayers = 9;  // Linear, Tanh, Linear, ..., Linear: parameter-free stages occur
constexpr int kSteps = 3;
constexpr double kLearningRate = 0.1;
constexpr uint64_t kSeed = 7;

// L_0 = Linear, L_1 = Tanh, L_2 = Linear, ...; the same seed gives the same weights.
inline torch::nn::Sequential makeMlp(uint64_t seed, int layers = kLayers) {
  torch::manual_seed(seed);
  torch::nn::Sequential model;
  for (int i = 0; i < layers; ++i) {
    if (i % 2 == 0) {
      model->push_back(torch::nn::Linear(kWidth, kWidth));
    } else {
      model->push_back(torch::nn::Tanh());
    }
  }
  return model;
}

// Step `step`'s batch: x, t [batch, kWidth].
inline std::pair<torch::Tensor, torch::Tensor> batchFor(int step, int64_t batch) {
  torch::manual_seed(1000 + step);
  torch::Tensor x = torch::randn({batch, kWidth});
  torch::Tensor t = torch::randn({batch, kWidth});
  return {x, t};
}

inline torch::Tensor mseLoss(const torch::Tensor& y, const torch::Tensor& t) {
  return torch::mse_loss(y, t);
}

struct Trained {
  std::vector<double> losses;
  torch::nn::Sequential model;
};

inline Trained trainSerial(uint64_t seed, int64_t batch) {
  Trained run{{}, makeMlp(seed)};
  torch::optim::SGD optimizer(run.model->parameters(), kLearningRate);
  for (int step = 0; step < kSteps; ++step) {
    auto [x, t] = batchFor(step, batch);
    optimizer.zero_grad();
    torch::Tensor loss = mseLoss(run.model->forward(x), t);
    loss.backward();
    optimizer.step();
    run.losses.push_back(loss.item<double>());
  }
  return run;
}

inline Trained trainPipelined(Pipeline& pipe, torch::nn::Sequential model, int64_t batch) {
  Trained run{{}, std::move(model)};
  torch::optim::SGD optimizer(pipe.parameters(), kLearningRate);
  for (int step = 0; step < kSteps; ++step) {
    auto [x, t] = batchFor(step, batch);
    optimizer.zero_grad();
    run.losses.push_back(pipe.step(x, t, mseLoss));
    optimizer.step();
  }
  return run;
}

// ||a - b||_inf <= 1e-5 ||b||_inf: float32 sums in another order, nothing more.
inline bool closeRelative(const torch::Tensor& a, const torch::Tensor& b) {
  double scale = b.abs().max().item<double>();
  return (a - b).abs().max().item<double>() <= 1e-5 * std::max(scale, 1e-6);
}

// Losses match everywhere; every parameter of the stages this process owns
// matches the serial model's, and training moved it (a frozen pipeline
// would otherwise pass against an untrained reference).
inline void expectMatchesSerial(const Pipeline& pipe, const Trained& piped, const Trained& serial,
                                const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(piped.losses.size(), serial.losses.size());
  for (std::size_t i = 0; i < serial.losses.size(); ++i) {
    EXPECT_NEAR(piped.losses[i], serial.losses[i], 1e-5 * std::abs(serial.losses[i]))
        << "loss of step " << i;
  }
  torch::nn::Sequential initial = makeMlp(kSeed);
  int checked = 0;
  for (const Stage& stage : pipe.stages()) {
    for (int i = 0; i < stage.numLayers(); ++i) {
      int layer = stage.firstLayer() + i;
      auto mine = stage.layers()[i].ptr()->parameters();
      auto reference = serial.model->ptr(layer)->parameters();
      ASSERT_EQ(mine.size(), reference.size());
      for (std::size_t p = 0; p < mine.size(); ++p) {
        EXPECT_TRUE(closeRelative(mine[p].cpu(), reference[p]))
            << "layer " << layer << " parameter " << p;
        EXPECT_FALSE(torch::equal(reference[p], initial->ptr(layer)->parameters()[p]))
            << "layer " << layer << " did not train";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked + static_cast<int>(pipe.parameters().empty()), 0);
}

// One configuration of the parallel-equals-serial matrix.
// Forward-only evaluation of the trained pipeline gives the trained serial
// model's loss on a fresh batch, on every rank, and leaves every gradient as
// the last training step left it.
inline void expectEvaluateMatchesSerial(Pipeline& pipe, const Trained& serial, int64_t batch,
                                        const std::string& what) {
  auto [x, t] = batchFor(kSteps, batch);
  torch::nn::Sequential reference = serial.model;  // a handle to the same module
  double expected;
  {
    torch::NoGradGuard noGrad;
    expected = mseLoss(reference->forward(x), t).item<double>();
  }
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : pipe.parameters()) grads.push_back(p.grad().clone());
  double loss = pipe.evaluate(x, t, mseLoss);
  EXPECT_NEAR(loss, expected, 1e-5 * std::max(std::abs(expected), 1e-6)) << what << ": evaluate";
  std::vector<torch::Tensor> params = pipe.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(torch::equal(params[i].grad(), grads[i])) << what << ": evaluate changed a grad";
  }
}

struct Config {
  Config(std::string schedule, int microbatches, int virtualStages = 1,
         std::vector<int> layersPerStage = {}, bool checkpoint = false,
         std::vector<int> checkpointStages = {})
      : schedule(std::move(schedule)),
        microbatches(microbatches),
        virtualStages(virtualStages),
        layersPerStage(std::move(layersPerStage)),
        checkpoint(checkpoint),
        checkpointStages(std::move(checkpointStages)) {}

  std::string schedule;
  int microbatches;
  int virtualStages;
  std::vector<int> layersPerStage;
  bool checkpoint;
  std::vector<int> checkpointStages;

  PipelineOptions options() const {
    PipelineOptions o;
    o.schedule = schedule;
    o.microbatches = microbatches;
    o.virtualStages = virtualStages;
    o.layersPerStage = layersPerStage;
    o.checkpointActivations = checkpoint;
    o.checkpointStages = checkpointStages;
    return o;
  }
  std::string describe(int ranks) const {
    std::string text = schedule + " pp=" + std::to_string(ranks) +
                       " m=" + std::to_string(microbatches) + " v=" + std::to_string(virtualStages);
    if (!layersPerStage.empty()) text += " uneven";
    if (checkpoint || !checkpointStages.empty()) text += " checkpointed";
    return text;
  }
};

// GPipe, 1F1B, ZB-H1 with m in {1, p, 2p + 1}; interleaved 1F1B (v = 2) with
// m in {p, 2p}; uneven cuts; activation checkpointing (all or some stages).
inline std::vector<Config> matrixFor(int p) {
  std::vector<Config> configs;
  for (const char* name : {"gpipe", "1f1b", "zb-h1"}) {
    for (int m : {1, p, 2 * p + 1}) configs.push_back(Config{name, m});
  }
  configs.push_back(Config{"interleaved-1f1b", p, 2});
  configs.push_back(Config{"interleaved-1f1b", 2 * p, 2});
  std::vector<int> uneven = p == 2   ? std::vector<int>{2, 7}
                            : p == 3 ? std::vector<int>{1, 5, 3}
                                     : std::vector<int>{4, 1, 3, 1};
  configs.push_back(Config{"1f1b", p, 1, uneven});
  configs.push_back(Config{"zb-h1", 2 * p + 1, 1, uneven, true});
  configs.push_back(Config{"gpipe", p, 1, {}, true});
  configs.push_back(Config{"interleaved-1f1b", p, 2, {}, false, {0, 2 * p - 1}});
  configs.push_back(Config{"zb-h1", p, 1, {}, false, {p - 1}});
  return configs;
}

}  // namespace strata::pipeline::testing

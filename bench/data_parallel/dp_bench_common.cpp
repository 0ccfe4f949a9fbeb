#include "dp_bench_common.h"

#include <chrono>

namespace strata::bench {

MlpShape smallMlp() { return {"mlp-2M", {512, 1024, 1024, 512}, 64}; }
MlpShape largeMlp() { return {"mlp-17M", {1024, 2048, 2048, 2048, 2048, 1024}, 64}; }

std::string describe(const MlpShape& shape) {
  std::string text;
  for (int64_t w : shape.widths) text += (text.empty() ? "" : "-") + std::to_string(w);
  return text;
}

BenchTrainer::BenchTrainer(const MlpShape& shape, Communicator& comm, Sync sync)
    : comm_(comm), sync_(sync) {
  torch::manual_seed(1);
  for (size_t i = 0; i + 1 < shape.widths.size(); ++i) {
    if (i > 0) model_->push_back(torch::nn::ReLU());
    model_->push_back(torch::nn::Linear(shape.widths[i], shape.widths[i + 1]));
  }
  if (sync != Sync::kNone) {
    dp_ = std::make_unique<data_parallel::DataParallel>(*model_, comm);
  }
  optimizer_ =
      std::make_unique<torch::optim::SGD>(model_->parameters(), torch::optim::SGDOptions(0.01));
  torch::manual_seed(2 + comm.rank());
  inputs_ = torch::randn({shape.batch, shape.widths.front()});
  targets_ = torch::randn({shape.batch, shape.widths.back()});
}

void BenchTrainer::step() {
  // Zeroed in place on both sides: LibTorch 2.x's default (set_to_none)
  // would have data parallelism copy every fresh gradient into its buffer,
  // one more pass than the plain loop makes (data_parallel.h).
  optimizer_->zero_grad(/*set_to_none=*/false);
  torch::Tensor loss = torch::mse_loss(model_->forward(inputs_), targets_);
  if (sync_ == Sync::kAfterBackward) {
    auto noSync = dp_->noSync();
    loss.backward();
  } else {
    loss.backward();
  }
  if (dp_) dp_->finishGradientSync();
  optimizer_->step();
}

double BenchTrainer::secondsPerStep(int steps) {
  comm_.barrier();
  auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) step();
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  // The slowest rank sets the pace of a synchronous job.
  torch::Tensor seconds = torch::tensor({elapsed.count() / steps}, torch::kDouble);
  comm_.allReduce(seconds, ReduceOp::kMax);
  return seconds.item<double>();
}

int64_t BenchTrainer::parameterCount() const {
  int64_t count = 0;
  for (const torch::Tensor& p : model_->parameters()) count += p.numel();
  return count;
}

}  // namespace strata::bench

// Tensor-parallel layers inside a module of your own.
//
// The model's wide middle layer pair is split over four workers,
// Megatron-style: the first layer by columns (ColumnParallelLinear: each
// worker computes a quarter of the wide activations), the second by rows
// (RowParallelLinear: each worker multiplies its quarter, and the partial
// products are summed across the workers). The activation between them is
// applied to each worker's quarter independently, so the pair costs one
// all-reduce in forward and one in backward. The narrow layers around it are
// ordinary torch::nn::Linear, replicated on every worker.
//
// Run it directly; it starts its four workers itself:
//
//   build/examples/tensor_parallel_custom_module
//
// or under a launcher (`strata launch --nproc-per-node 4 -- ...`, torchrun).
// Worker 0 also trains the same model built over a group of one worker, which
// makes every layer whole: the serial model. The program exits non-zero
// unless the split model's loss equals the serial one at every step and
// falls to a fifth.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include "strata/launch/local_job.h"
#include "strata/runtime/world.h"
#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/row_parallel_linear.h"

namespace {

namespace tp = strata::tensor_parallel;

constexpr int kWorkers = 4;
constexpr int kSteps = 40;
constexpr int64_t kBatch = 64;
constexpr int64_t kInputs = 8;
constexpr int64_t kHidden = 32;
constexpr int64_t kWide = 256;  // split: kWide / tp features per worker

// The parallel layers draw their full weights from a seed of their own and
// keep this worker's slice, so the slices of every worker together are
// exactly the weights the whole layer gets from the same seed.
tp::ColumnParallelLinearOptions widenOptions() {
  tp::ColumnParallelLinearOptions options;
  options.inFeatures = kHidden;
  options.outFeatures = kWide;
  options.init.seed = 1;
  options.init.weightStd = 1 / std::sqrt(double{kHidden});
  return options;
}

tp::RowParallelLinearOptions narrowOptions() {
  tp::RowParallelLinearOptions options;
  options.inFeatures = kWide;
  options.outFeatures = kHidden;
  options.inputIsParallel = true;  // it receives the column-parallel layer's slice
  options.init.seed = 2;
  options.init.weightStd = 1 / std::sqrt(double{kWide});
  return options;
}

// The user's model: y = head(h + narrow(gelu(widen(h)))), h = relu(embed(x)).
struct WideRegressorImpl : torch::nn::Module {
  explicit WideRegressorImpl(std::shared_ptr<strata::Communicator> tensorParallel)
      : embed(register_module("embed", torch::nn::Linear(kInputs, kHidden))),
        widen(register_module("widen", tp::ColumnParallelLinear(widenOptions(), tensorParallel))),
        narrow(register_module("narrow", tp::RowParallelLinear(narrowOptions(), tensorParallel))),
        head(register_module("head", torch::nn::Linear(kHidden, 1))) {}

  torch::Tensor forward(const torch::Tensor& x) {  // [b, inputs]
    torch::Tensor h = torch::relu(embed(x));       // [b, hidden], alike on every worker
    torch::Tensor slice = torch::gelu(widen(h));   // [b, wide / tp], this worker's columns
    return head(h + narrow(slice));                // [b, 1]; narrow sums the workers' parts
  }

  torch::nn::Linear embed;
  tp::ColumnParallelLinear widen;
  tp::RowParallelLinear narrow;
  torch::nn::Linear head;
};
TORCH_MODULE(WideRegressor);

// The replicated layers draw from the global generator, so every worker (and
// the serial twin) seeds it alike before building the model.
WideRegressor buildModel(std::shared_ptr<strata::Communicator> tensorParallel) {
  torch::manual_seed(0);
  return WideRegressor(std::move(tensorParallel));
}

// One training step of `model`; returns the loss before the update.
double trainStep(WideRegressor& model, torch::optim::Optimizer& optimizer, const torch::Tensor& x,
                 const torch::Tensor& y) {
  optimizer.zero_grad();
  torch::Tensor loss = torch::mse_loss(model(x), y);
  loss.backward();  // the parallel layers all-reduce the input gradient in here
  optimizer.step();
  return loss.item<double>();
}

int trainShard() {
  auto world = strata::World::init();
  strata::ParallelDegrees degrees;
  degrees.tp = world->size();  // every worker holds a slice of each parallel layer
  strata::ParallelGroups groups =
      world->parallelGroups(strata::ParallelLayout(world->size(), degrees));
  bool printer = world->rank() == 0;

  // Tensor-parallel workers compute on the same batch.
  torch::manual_seed(1);
  torch::Tensor x = torch::randn({kBatch, kInputs});                      // [64, 8]
  torch::Tensor y = torch::sin(2 * x).sum(1, true) / std::sqrt(kInputs);  // [64, 1]

  WideRegressor model = buildModel(groups.tp);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  // The serial twin lives on worker 0 only, over a group of that worker alone.
  WideRegressor serial{nullptr};
  std::unique_ptr<torch::optim::SGD> serialOptimizer;
  if (printer) {
    serial = buildModel(world->newGroup("serial-twin", {0}));
    serialOptimizer = std::make_unique<torch::optim::SGD>(
        serial->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  }

  double firstLoss = 0, lastLoss = 0, worstDifference = 0;
  for (int step = 0; step < kSteps; ++step) {
    lastLoss = trainStep(model, optimizer, x, y);
    if (step == 0) firstLoss = lastLoss;
    if (!printer) continue;
    double serialLoss = trainStep(serial, *serialOptimizer, x, y);
    worstDifference = std::max(worstDifference, std::abs(lastLoss - serialLoss) / serialLoss);
    std::cout << "step " << step << " loss " << lastLoss << " (serial " << serialLoss << ")"
              << std::endl;
  }

  bool sameAsSerial = worstDifference <= 1e-5;
  if (printer) std::cout << "largest relative difference to serial: " << worstDifference << "\n";
  if (!sameAsSerial) std::cerr << "the split model drifted from the serial one\n";
  bool learned = lastLoss < 0.2 * firstLoss;
  if (!learned) std::cerr << "the loss did not fall to a fifth: " << lastLoss << "\n";
  return sameAsSerial && learned ? 0 : 1;
}

}  // namespace

int main() {
  // Run directly, this process launches kWorkers copies of itself and waits
  // for them; each copy (RANK set by the launch) runs trainShard.
  return strata::runAsLocalJob(kWorkers, trainShard);
}

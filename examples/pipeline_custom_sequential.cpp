// A pipeline over a torch::nn::Sequential of your own, with a layer type of
// your own in it.
//
// Four workers each run a stage of the model: a contiguous run of its
// layers. Where to cut is measured, not guessed: every worker times each
// layer's forward and backward on one micro-batch, and the cut balances the
// stages' time. The batch is cut into micro-batches that flow through the
// stages under the 1F1B schedule, so the stages work at the same time.
//
// Run it directly; it starts its four workers itself:
//
//   build/examples/pipeline_custom_sequential
//
// or under a launcher (`strata launch --nproc-per-node 4 -- ...`, torchrun).
// It exits non-zero unless the pipeline's first loss equals the loss of the
// same model run whole, in one piece, and the loss then falls to a fifth.
#include <torch/torch.h>

#include <cmath>
#include <iostream>

#include "strata/launch/local_job.h"
#include "strata/pipeline/pipeline.h"
#include "strata/runtime/world.h"

namespace {

constexpr int kWorkers = 4;
constexpr int kSteps = 40;
constexpr int kMicrobatches = 8;
constexpr int64_t kBatch = 64;
constexpr int64_t kInputs = 8;
constexpr int64_t kWidth = 32;

// The user's own layer: x + W2 gelu(W1 x). Any module whose forward takes
// and returns one tensor can be a layer of the pipeline.
struct ResidualBlockImpl : torch::nn::Module {
  explicit ResidualBlockImpl(int64_t width)
      : expand(register_module("expand", torch::nn::Linear(width, 2 * width))),
        project(register_module("project", torch::nn::Linear(2 * width, width))) {}

  torch::Tensor forward(const torch::Tensor& x) {  // [b, width] -> [b, width]
    return x + project(torch::gelu(expand(x)));
  }

  torch::nn::Linear expand;
  torch::nn::Linear project;
};
TORCH_MODULE(ResidualBlock);

// Six layers for the pipeline to cut into four stages.
torch::nn::Sequential buildModel() {
  return torch::nn::Sequential(torch::nn::Linear(kInputs, kWidth), ResidualBlock(kWidth),
                               ResidualBlock(kWidth), ResidualBlock(kWidth), ResidualBlock(kWidth),
                               torch::nn::Linear(kWidth, 1));
}

double meanSquaredError(const torch::Tensor& prediction, const torch::Tensor& target) {
  return torch::mse_loss(prediction, target).item<double>();
}

int trainStage() {
  auto world = strata::World::init();
  strata::ParallelDegrees degrees;
  degrees.pp = world->size();  // every worker is one pipeline stage
  strata::ParallelGroups groups =
      world->parallelGroups(strata::ParallelLayout(world->size(), degrees));
  bool printer = world->rank() == 0;

  // Every worker builds the whole model from the same seed, and the same
  // batch; the pipeline keeps only this worker's layers.
  torch::manual_seed(0);
  torch::nn::Sequential model = buildModel();
  torch::Tensor x = torch::randn({kBatch, kInputs});                      // [64, 8]
  torch::Tensor y = torch::sin(2 * x).sum(1, true) / std::sqrt(kInputs);  // [64, 1]

  // The reference: the untrained model run whole, before the pipeline splits it.
  double wholeModelLoss = 0;
  {
    torch::NoGradGuard noGrad;
    wholeModelLoss = meanSquaredError(model->forward(x), y);
  }

  strata::pipeline::PipelineOptions options;
  options.schedule = "1f1b";
  options.microbatches = kMicrobatches;
  options.autoPartition = true;                                   // cut by measured cost
  options.profileInput = x.narrow(0, 0, kBatch / kMicrobatches);  // one micro-batch, [8, 8]
  strata::pipeline::Pipeline pipe(model, groups, options);
  if (printer) std::cout << pipe.partitionTable() << std::endl;
  torch::optim::Adam optimizer(pipe.parameters(), 1e-2);  // this stage's parameters only

  auto lossFn = [](const torch::Tensor& prediction, const torch::Tensor& target) {
    return torch::mse_loss(prediction, target);
  };
  double firstLoss = 0, lastLoss = 0;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    lastLoss = pipe.step(x, y, lossFn);  // the whole batch's mean loss, on every worker
    optimizer.step();
    if (step == 0) firstLoss = lastLoss;
    if (printer) std::cout << "step " << step << " loss " << lastLoss << std::endl;
  }

  bool sameAsWhole = std::abs(firstLoss - wholeModelLoss) <= 1e-5 * wholeModelLoss;
  if (!sameAsWhole) {
    std::cerr << "pipeline loss " << firstLoss << " != whole model's " << wholeModelLoss << "\n";
  }
  bool learned = lastLoss < 0.2 * firstLoss;
  if (!learned) std::cerr << "the loss did not fall to a fifth: " << lastLoss << "\n";
  return sameAsWhole && learned ? 0 : 1;
}

}  // namespace

int main() {
  // Run directly, this process launches kWorkers copies of itself and waits
  // for them; each copy (RANK set by the launch) runs trainStage.
  return strata::runAsLocalJob(kWorkers, trainStage);
}

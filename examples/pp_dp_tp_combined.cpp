// Pipeline, data and tensor parallel together (pp 2 x dp 2 x tp 2) on a
// model of your own.
//
// Eight workers form a 2 x 2 x 2 grid. The model is a Sequential of four
// layers cut into two pipeline stages; inside each stage the MLP blocks are
// split over two tensor-parallel workers; and the whole pipeline is
// replicated twice, each replica reading half of the batch, with gradients
// averaged over the replicas while the last micro-batch's backward runs.
// Rank order puts tp fastest, then dp, then pp:
//   rank = tp + 2 * (dp + 2 * pp),
// so the chatty tensor-parallel pairs are neighbours (one node's fast links).
//
// Run it directly; it starts its eight workers itself:
//
//   build/examples/pp_dp_tp_combined
//
// or under a launcher (`strata launch --nproc-per-node 8 -- ...`, torchrun).
// It exits non-zero unless the loss halves and both data-parallel replicas
// end with the same parameters.
#include <torch/torch.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "strata/data_parallel/data_parallel.h"
#include "strata/error.h"
#include "strata/launch/local_job.h"
#include "strata/pipeline/pipeline.h"
#include "strata/runtime/world.h"
#include "strata/tensor_parallel/parallel_mlp.h"

namespace {

namespace dp = strata::data_parallel;
namespace tp = strata::tensor_parallel;

constexpr int kWorkers = 8;
constexpr int kSteps = 20;
constexpr int kMicrobatches = 4;
constexpr int kClasses = 4;
constexpr int64_t kGlobalBatch = 128;  // each data-parallel replica reads half
constexpr int64_t kInputs = 16;
constexpr int64_t kHidden = 32;

// The user's block: x + MLP(LayerNorm(x)), whose MLP hidden layer (4 x
// hidden wide) is split over the tensor-parallel group. `seed` gives each
// block its own weights.
struct FeedForwardBlockImpl : torch::nn::Module {
  FeedForwardBlockImpl(uint64_t seed, std::shared_ptr<strata::Communicator> tensorParallel)
      : norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kHidden})))),
        mlp(register_module("mlp", tp::ParallelMLP(mlpOptions(seed), tensorParallel))) {}

  torch::Tensor forward(const torch::Tensor& x) {  // [b, hidden] -> [b, hidden]
    return x + mlp(norm(x));
  }

  static tp::ParallelMLPOptions mlpOptions(uint64_t seed) {
    tp::ParallelMLPOptions options;
    options.hidden = kHidden;
    options.ffn = 4 * kHidden;
    options.init.seed = seed;
    options.init.weightStd = 0.1;
    return options;
  }

  torch::nn::LayerNorm norm;
  tp::ParallelMLP mlp;
};
TORCH_MODULE(FeedForwardBlock);

// Four layers, two per pipeline stage. The Linear layers are replicated over
// tp; they draw from the global generator, seeded alike on every worker.
torch::nn::Sequential buildModel(std::shared_ptr<strata::Communicator> tensorParallel) {
  torch::manual_seed(0);
  return torch::nn::Sequential(
      torch::nn::Linear(kInputs, kHidden), FeedForwardBlock(1, tensorParallel),
      FeedForwardBlock(2, tensorParallel), torch::nn::Linear(kHidden, kClasses));
}

struct Batch {
  torch::Tensor inputs;  // [n, inputs]
  torch::Tensor labels;  // [n], the class a fixed random linear map scores highest
};

// This replica's half of a fixed global batch: rows [r * n / R, (r + 1) * n / R).
// Workers of one replica (its stages and tp slices) read the same rows.
Batch replicaBatch(const strata::ParallelGroups& groups) {
  torch::manual_seed(1);
  torch::Tensor inputs = torch::randn({kGlobalBatch, kInputs});  // [128, 16]
  torch::Tensor labels = inputs.matmul(torch::randn({kInputs, kClasses})).argmax(1);
  int64_t rows = kGlobalBatch / groups.dp->size();
  int64_t first = groups.dp->rank() * rows;
  return {inputs.narrow(0, first, rows), labels.narrow(0, first, rows)};  // [64, 16], [64]
}

// The parameters of this worker's stages, named by layer index, so the
// replicas of one stage agree on the names.
std::vector<dp::NamedTensor> stageParameters(const strata::pipeline::Pipeline& pipe) {
  std::vector<dp::NamedTensor> named;
  for (const strata::pipeline::Stage& stage : pipe.stages()) {
    for (int i = 0; i < stage.numLayers(); ++i) {
      std::string layer = "layer" + std::to_string(stage.firstLayer() + i) + ".";
      for (const auto& item : stage.layers()[i].ptr()->named_parameters()) {
        named.push_back({layer + item.key(), item.value()});
      }
    }
  }
  return named;
}

// Compares this stage's parameters across the data-parallel replicas.
bool replicasAgree(const std::vector<dp::NamedTensor>& parameters, strata::Communicator& comm) {
  try {
    dp::checkTensorsEqual(parameters, comm);
    return true;
  } catch (const strata::ConfigError& e) {
    std::cerr << "replicas differ: " << e.what() << std::endl;
    return false;
  }
}

int trainWorker() {
  auto world = strata::World::init();
  strata::ParallelDegrees degrees;
  degrees.pp = 2;
  degrees.dp = 2;
  degrees.tp = 2;
  // Throws, naming every factor, unless the job has pp x dp x tp workers.
  strata::ParallelGroups groups =
      world->parallelGroups(strata::ParallelLayout(world->size(), degrees));
  bool printer = world->rank() == 0;

  strata::pipeline::PipelineOptions options;
  options.schedule = "1f1b";
  options.microbatches = kMicrobatches;
  options.layersPerStage = {2, 2};
  // The pipeline uses only the pp group; the tp layers already hold theirs.
  strata::pipeline::Pipeline pipe(buildModel(groups.tp), groups, options);
  std::vector<dp::NamedTensor> parameters = stageParameters(pipe);
  dp::DataParallel dataParallel(parameters, *groups.dp);  // broadcasts replica 0's weights
  torch::optim::AdamW optimizer(pipe.parameters(), torch::optim::AdamWOptions(1e-2));

  // Micro-batches only accumulate gradients until each parameter's last one
  // is due; the hook then turns the sync on, so the buckets reduce during
  // the last micro-batch's backward instead of after the step.
  strata::pipeline::StepHooks hooks;
  hooks.beforeLastWeightGradients = [&dataParallel] { dataParallel.setRequireSync(true); };
  auto lossFn = [](const torch::Tensor& logits, const torch::Tensor& labels) {
    return torch::nn::functional::cross_entropy(logits, labels);
  };

  Batch batch = replicaBatch(groups);
  double firstLoss = 0, lastLoss = 0;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    dataParallel.setRequireSync(false);
    torch::Tensor loss = torch::tensor(pipe.step(batch.inputs, batch.labels, lossFn, hooks));
    dataParallel.finishGradientSync();  // gradients are now averaged over the replicas
    optimizer.step();
    groups.dp->allReduce(loss, strata::ReduceOp::kAvg);  // the global batch's loss
    lastLoss = loss.item<double>();
    if (step == 0) firstLoss = lastLoss;
    if (printer) std::cout << "step " << step << " loss " << lastLoss << std::endl;
  }

  bool agree = replicasAgree(parameters, *groups.dp);
  bool learned = lastLoss < 0.5 * firstLoss;
  if (!learned) std::cerr << "the loss did not halve: " << firstLoss << " -> " << lastLoss << "\n";
  return agree && learned ? 0 : 1;
}

}  // namespace

int main() {
  // Run directly, this process launches kWorkers copies of itself and waits
  // for them; each copy (RANK set by the launch) runs trainWorker.
  return strata::runAsLocalJob(kWorkers, trainWorker);
}

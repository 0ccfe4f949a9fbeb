// Data parallel with ZeRO-2 on a small CNN of your own.
//
// Four replicas of the same CNN each read a different quarter of every batch
// (DistributedSampler). Gradients are averaged over the replicas while
// backward runs (DataParallel), and the AdamW state is sharded: each replica
// keeps the moments of only a quarter of the parameters, updates that
// quarter, and the updated parameters are all-gathered (ZeroOptimizer).
//
// Run it directly; it starts its four workers itself:
//
//   build/examples/zero_data_parallel
//
// or under a launcher (`strata launch --nproc-per-node 4 -- ...`, torchrun),
// which sets RANK and the rest for each worker. It exits non-zero unless the
// loss halves and every replica ends with the same parameters.
#include <torch/torch.h>

#include <iostream>
#include <memory>
#include <vector>

#include "strata/data_parallel/data_parallel.h"
#include "strata/data_parallel/distributed_sampler.h"
#include "strata/data_parallel/flat_optimizer.h"
#include "strata/data_parallel/zero_optimizer.h"
#include "strata/error.h"
#include "strata/launch/local_job.h"
#include "strata/runtime/world.h"

namespace {

namespace dp = strata::data_parallel;

constexpr int kWorkers = 4;
constexpr int kSteps = 30;
constexpr int kClasses = 4;
constexpr int64_t kDatasetSize = 1024;
constexpr int64_t kReplicaBatch = 16;  // the global batch is kReplicaBatch x replicas

// The user's model: plain LibTorch, nothing Strata-specific in it.
struct QuadrantNetImpl : torch::nn::Module {
  QuadrantNetImpl()
      : conv(register_module("conv",
                             torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 3).padding(1)))),
        head(register_module("head", torch::nn::Linear(8 * 4 * 4, kClasses))) {}

  torch::Tensor forward(const torch::Tensor& images) {                         // [b, 1, 8, 8]
    torch::Tensor features = torch::max_pool2d(torch::relu(conv(images)), 2);  // [b, 8, 4, 4]
    return head(features.flatten(1));                                          // [b, classes]
  }

  torch::nn::Conv2d conv;
  torch::nn::Linear head;
};
TORCH_MODULE(QuadrantNet);

struct Dataset {
  torch::Tensor images;  // [n, 1, 8, 8]
  torch::Tensor labels;  // [n], the quadrant that is brighter than the rest
};

// Noise images with one bright quadrant; the class is which one. Every rank
// draws the same dataset from the same seed and reads only its own samples.
Dataset makeQuadrantImages(int64_t size) {
  torch::manual_seed(1234);
  torch::Tensor quadrants = torch::zeros({kClasses, 8, 8});  // [4, 8, 8] masks
  for (int q = 0; q < kClasses; ++q) {
    quadrants[q].narrow(0, (q / 2) * 4, 4).narrow(1, (q % 2) * 4, 4).fill_(1);
  }
  torch::Tensor labels = torch::randint(kClasses, {size}, torch::kLong);
  torch::Tensor images =
      torch::randn({size, 1, 8, 8}) + quadrants.index_select(0, labels).unsqueeze(1);
  return {images, labels};
}

// This replica's sample indices for `step`: consecutive slices of the
// sampler's order for the epoch, a new shuffle each epoch.
torch::Tensor replicaBatch(const dp::DistributedSampler& sampler, int step) {
  int64_t stepsPerEpoch = sampler.samplesPerReplica() / kReplicaBatch;
  std::vector<int64_t> order = sampler.indices(step / stepsPerEpoch);
  auto first = order.begin() + (step % stepsPerEpoch) * kReplicaBatch;
  return torch::tensor(std::vector<int64_t>(first, first + kReplicaBatch));  // [kReplicaBatch]
}

// Each replica's loss is that of its own samples; their mean is the loss of
// the whole global batch.
double meanOverReplicas(const torch::Tensor& loss, strata::Communicator& comm) {
  torch::Tensor mean = loss.detach().clone();
  comm.allReduce(mean, strata::ReduceOp::kAvg);
  return mean.item<double>();
}

// Compares every parameter across the replicas; a difference means the
// gradients or the sharded updates went wrong.
bool replicasAgree(torch::nn::Module& model, strata::Communicator& comm) {
  std::vector<dp::NamedTensor> parameters;
  for (const auto& item : model.named_parameters())
    parameters.push_back({item.key(), item.value()});
  try {
    dp::checkTensorsEqual(parameters, comm);
    return true;
  } catch (const strata::ConfigError& e) {
    std::cerr << "replicas differ: " << e.what() << std::endl;
    return false;
  }
}

int trainReplica() {
  auto world = strata::World::init();
  // Every rank is a replica, so the world's communicator is the data-parallel group.
  strata::Communicator& replicas = world->comm();
  bool printer = world->rank() == 0;
  Dataset data = makeQuadrantImages(kDatasetSize);
  dp::DistributedSampler sampler(kDatasetSize, replicas.size(), replicas.rank());

  QuadrantNet model;
  // ZeRO-2: gradients are reduce-scattered, so each rank receives only the
  // averaged chunks it updates. Construction broadcasts rank 0's weights.
  dp::DataParallelOptions options;
  options.reduction = dp::GradientReduction::kReduceScatter;
  dp::DataParallel dataParallel(*model, replicas, options);
  dp::AdamWConfig adamW;
  adamW.lr = 1e-2;
  dp::ZeroOptimizer optimizer(dataParallel, std::make_unique<dp::FlatAdamW>(adamW));

  double firstLoss = 0, lastLoss = 0;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zeroGrad();
    torch::Tensor samples = replicaBatch(sampler, step);
    torch::Tensor logits = model(data.images.index_select(0, samples));  // [batch, classes]
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(logits, data.labels.index_select(0, samples));
    loss.backward();   // gradient buckets start reducing while backward still runs
    optimizer.step();  // waits for them, updates this rank's shard, all-gathers the parameters
    lastLoss = meanOverReplicas(loss, replicas);
    if (step == 0) firstLoss = lastLoss;
    if (printer) std::cout << "step " << step << " loss " << lastLoss << std::endl;
  }
  if (printer) {
    int64_t fullState = 0;  // AdamW keeps two moments per parameter element
    for (const auto& p : model->parameters()) fullState += 2 * p.numel() * p.element_size();
    std::cout << "AdamW state on rank 0: " << optimizer.stateBytes() << " of " << fullState
              << " bytes" << std::endl;
  }
  bool agree = replicasAgree(*model, replicas);
  bool learned = lastLoss < 0.5 * firstLoss;
  if (!learned) std::cerr << "the loss did not halve: " << firstLoss << " -> " << lastLoss << "\n";
  return agree && learned ? 0 : 1;
}

}  // namespace

int main() {
  // Run directly, this process launches kWorkers copies of itself and waits
  // for them; each copy (RANK set by the launch) runs trainReplica.
  return strata::runAsLocalJob(kWorkers, trainReplica);
}

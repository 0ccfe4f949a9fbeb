// A seven-layer model spread unevenly over five workers, as on two nodes
// whose containers hold one or two devices each: node A runs workers 0-2,
// node B workers 3-4, and the cut gives the two middle workers one layer
// each and the others more. Run it with the launcher:
//
//   build/strata launch --nproc-per-node 5 -- build/examples/uneven_five_workers
//
// or by hand, one process per worker with RANK=0..4, WORLD_SIZE=5,
// MASTER_ADDR=127.0.0.1 and MASTER_PORT set. Every worker builds the same
// model from the same seed and keeps only its own layers; the loss printed
// by worker 0 is the whole batch's.
#include <torch/torch.h>

#include <iostream>

#include "strata/pipeline/pipeline.h"
#include "strata/runtime/world.h"

int main() {
  torch::set_num_threads(1);
  auto world = strata::World::init();
  strata::ParallelDegrees degrees;
  degrees.pp = world->size();
  strata::ParallelGroups groups =
      world->parallelGroups(strata::ParallelLayout(world->size(), degrees));

  torch::manual_seed(0);
  torch::nn::Sequential model(
      torch::nn::Linear(8, 64), torch::nn::ReLU(), torch::nn::Linear(64, 64), torch::nn::ReLU(),
      torch::nn::Linear(64, 64), torch::nn::Tanh(), torch::nn::Linear(64, 2));
  strata::pipeline::PipelineOptions options;
  options.schedule = "1f1b";
  options.microbatches = 10;
  if (world->size() == 5) options.layersPerStage = {2, 1, 1, 2, 1};
  strata::pipeline::Pipeline pipe(model, groups, options);
  torch::optim::Adam optimizer(pipe.parameters(), 1e-2);

  torch::manual_seed(1);
  torch::Tensor x = torch::randn({200, 8});
  torch::Tensor label = (x.sum(1) > 0).to(torch::kLong);  // learnable: the sign of the sum
  auto lossFn = [](const torch::Tensor& logits, const torch::Tensor& target) {
    return torch::nn::functional::cross_entropy(logits, target);
  };
  for (int step = 0; step < 30; ++step) {
    optimizer.zero_grad();
    double loss = pipe.step(x, label, lossFn);
    optimizer.step();
    if (world->rank() == 0 && (step % 10 == 0 || step == 29)) {
      std::cout << "step " << step << " loss " << loss << std::endl;
    }
  }
  return 0;
}

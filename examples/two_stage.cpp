// The classic minimal model parallel: a two-layer model split over two
// devices of one process. The pipeline moves activations and gradients
// between the devices itself; the program has no .to(device) plumbing.
// With two GPUs pass cuda:0 and cuda:1; here both stages run on the CPU
// unless CUDA is available.
#include <torch/torch.h>

#include <iostream>

#include "strata/pipeline/pipeline.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(16, 32), torch::nn::Linear(32, 4));

  bool twoGpus = torch::cuda::device_count() >= 2;
  std::vector<at::Device> devices =
      twoGpus ? std::vector<at::Device>{at::Device("cuda:0"), at::Device("cuda:1")}
              : std::vector<at::Device>{at::kCPU, at::kCPU};
  strata::pipeline::PipelineOptions options;
  options.schedule = "1f1b";
  options.microbatches = 4;
  strata::pipeline::Pipeline pipe(model, devices, options);
  torch::optim::SGD optimizer(pipe.parameters(), 0.05);

  torch::Tensor x = torch::randn({32, 16});
  torch::Tensor y = x.narrow(1, 0, 4) * 2;  // a target the model can learn
  auto lossFn = [](const torch::Tensor& out, const torch::Tensor& t) {
    return torch::mse_loss(out, t);
  };
  for (int step = 0; step < 20; ++step) {
    optimizer.zero_grad();
    double loss = pipe.step(x, y, lossFn);
    optimizer.step();
    if (step % 5 == 0 || step == 19) std::cout << "step " << step << " loss " << loss << "\n";
  }
  return 0;
}

// bench_gpu: a GPT of about 1.2 billion parameters (20 blocks of width 2048,
// FFN 8192, vocabulary 50304, 1024-token sequences, batch 16) trained in bf16
// autocast on one GPU, float32 master weights and AdamW state.
//
//   gpu_train       Strata's Trainer (train.device = cuda, pp = dp = tp = 1):
//                   tokens/s, model TFLOP/s (flops.h: 6 N + 12 L h s per
//                   token) and MFU against the GPU's dense bf16 datasheet
//                   peak (gpu_peak.h names the figure used), and the CUDA
//                   allocator's peak.
//   gpu_vs_pytorch  the same model, batch and optimizer in PyTorch eager
//                   (scripts/bench_gpu_pytorch.py: autocast, SDPA, AdamW),
//                   run after Strata in the same process's lifetime once
//                   Strata's memory is given back; ratio = pytorch step time /
//                   strata step time (> 1: Strata is faster).
//
// Each side runs kWarmup untimed steps, then kSteps timed ones; the timing
// ends with a device synchronisation, so queued GPU work is counted. Where
// LibTorch sees no GPU it says so on stderr and exits 0 without a result.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_env.h"
#include "gpu_peak.h"
#include "gpu_peer.h"
#include "strata/report/flops.h"
#include "strata/report/memory.h"
#include "strata/runtime/world.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"

#ifdef STRATA_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace {
using strata::jsonNumber;
using strata::train::TrainConfig;

constexpr int kWarmup = 2;
constexpr int kSteps = 5;

TrainConfig benchConfig() {
  TrainConfig c;
  c.model.layers = 20;
  c.model.hidden = 2048;
  c.model.heads = 16;
  c.model.ffn = 8192;
  c.model.vocab = 50304;  // GPT-2's 50257 rounded up to a multiple of 64
  c.model.context = 1024;
  c.model.dropout = 0.0;
  c.model.tiedEmbeddings = false;
  c.train.globalBatch = 16;
  c.train.microBatch = 16;  // one micro-batch: the whole batch in one pass
  c.train.seqLen = 1024;
  c.train.steps = 1000;
  c.train.warmupSteps = 0;
  c.train.lr = 3e-4;
  c.train.minLr = c.train.lr;
  c.train.precision = "bf16";
  c.train.device = "cuda";
  c.train.threads = 4;  // the host only builds the model (its seeded init) and feeds the GPU
  c.data.corpusBytes = 600000;  // ~560 windows: no epoch ends during the bench
  return c;
}

struct StrataTiming {
  double stepSeconds = 0;
  double lastLoss = 0;
  double peakBytes = 0;
  int64_t parameters = 0;
};

StrataTiming timeStrata(const TrainConfig& config) {
  StrataTiming timing;
  strata::train::Trainer trainer(config, strata::bench::singleProcessWorld());
  timing.parameters = trainer.parameterCount();
  for (int i = 0; i < kWarmup; ++i) trainer.step();
  torch::cuda::synchronize();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kSteps; ++i) timing.lastLoss = trainer.step().loss;
  torch::cuda::synchronize();
  timing.stepSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kSteps;
  timing.peakBytes = static_cast<double>(strata::train::peakCudaBytes());
  return timing;
}

// Hands Strata's cached blocks back to the driver, so the Python peer has
// the whole GPU as Strata had.
void releaseCudaCache() {
#ifdef STRATA_WITH_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

double flopsPerToken(const TrainConfig& c) {
  return strata::train::gptTrainingFlopsPerToken(
      {c.model.layers, c.model.hidden, c.model.ffn, c.model.vocab, c.train.seqLen});
}

nlohmann::ordered_json result(const char* name, const TrainConfig& c, double stepSeconds,
                              double peakBytes, const strata::bench::GpuPeak& peak) {
  double tokensPerSecond = static_cast<double>(c.train.globalBatch * c.train.seqLen) / stepSeconds;
  double flops = flopsPerToken(c) * tokensPerSecond;
  return {{"bench", name},
          {"device", peak.device},
          {"step_s", jsonNumber(stepSeconds)},
          {"tokens_per_s", jsonNumber(tokensPerSecond)},
          {"tflops", jsonNumber(flops / 1e12)},
          {"mfu", peak.bf16FlopsPerSecond > 0 ? jsonNumber(flops / peak.bf16FlopsPerSecond)
                                              : jsonNumber(std::nan(""))},
          {"peak_tflops", jsonNumber(peak.bf16FlopsPerSecond / 1e12)},
          {"peak_source", peak.source},
          {"peak_cuda_memory_bytes", jsonNumber(peakBytes)}};
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::cerr << "bench_gpu: no CUDA device visible to this LibTorch; nothing to measure\n";
    return 0;
  }
  TrainConfig config = benchConfig();
  strata::bench::GpuPeak peak = strata::bench::currentGpuPeak();
  std::cerr << "bench_gpu: " << peak.device << ", Strata: " << kWarmup << " + " << kSteps
            << " steps\n";
  StrataTiming strata = timeStrata(config);
  releaseCudaCache();
  nlohmann::ordered_json train =
      result("gpu_train", config, strata.stepSeconds, strata.peakBytes, peak);
  train["parameters"] = strata.parameters;
  train["batch_tokens"] = config.train.globalBatch * config.train.seqLen;
  train["last_loss"] = jsonNumber(strata.lastLoss);
  std::cout << strata::dumpJson(train) << std::endl;

  std::cerr << "bench_gpu: PyTorch eager peer\n";
  strata::bench::PytorchGpuTiming pytorch =
      strata::bench::timePytorchGpuStep(config, kWarmup, kSteps);
  nlohmann::ordered_json peer =
      result("gpu_vs_pytorch", config, pytorch.stepSeconds, pytorch.peakBytes, peak);
  peer["ratio"] = jsonNumber(pytorch.stepSeconds / strata.stepSeconds);
  peer["strata_step_s"] = jsonNumber(strata.stepSeconds);
  peer["last_loss"] = jsonNumber(pytorch.lastLoss);
  std::cout << strata::dumpJson(peer) << std::endl;
  return 0;
}

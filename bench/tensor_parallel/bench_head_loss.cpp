// The GPT head and its loss, forward and backward, as the trainer's last
// stage runs them, with the head's product fused into the cross-entropy
// (chunk by chunk, vocab_parallel_linear_cross_entropy.h) against the logits
// made whole and then the loss (vocab_parallel_cross_entropy.h): the demo's
// shape, GPT-2's 50257 tokens over tp 2, a step of 8 micro-batches of 2 x 64
// tokens (one precision scope, the weight's gradient accumulating), width
// 128, on 2 processes of one thread each. The two alternate in rounds
// (A B B A ...) so that the machine's drift cancels; each keeps its median.
//
// Then the memory: one micro-batch of 4 x 1024 tokens, fused first, then
// unfused, each followed by the process's resident peak (a high-water mark,
// so the unfused side's figure is its own peak unless the fused one's was
// higher). The unfused side holds the whole micro-batch's logits in the
// product's dtype, their float32 copy and the saved softmax.
//
// Prints one JSON line per precision (rank 0; bf16 only where the CPU has it
// natively), then the memory line:
// {"bench":"head_loss","precision":"fp32","tp":2,"vocab":50257,"tokens":128,
//  "microbatches":8,"unfused_ms":...,"fused_ms":...,"speedup":...,"loss_diff":...}
// (milliseconds per step; loss_diff between the two's last losses)
// {"bench":"head_loss_memory","precision":"fp32","tp":2,"tokens":4096,
//  "peak_rss_fused_mb":...,"peak_rss_unfused_mb":...}
#include <sys/resource.h>
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "strata/error.h"
#include "strata/models/gpt.h"
#include "strata/pipeline/split.h"
#include "strata/runtime/world.h"
#include "strata/train/precision.h"
#include "strata/util/json.h"

namespace strata::bench {
namespace {

constexpr int64_t kVocab = 50257, kHidden = 128, kSeq = 64, kBatch = 2;
constexpr int kMicroBatches = 8, kRounds = 10, kRunsPerRound = 3;

models::GptConfig headConfig(bool fused) {
  models::GptConfig c;
  c.layers = 1;
  c.hidden = kHidden;
  c.heads = 4;
  c.ffn = 4 * kHidden;
  c.vocab = kVocab;
  c.context = kSeq;
  c.tiedEmbeddings = true;
  c.geluTanh = true;
  c.fusedHeadLoss = fused;
  return c;
}

// The head of a GPT and the loss of its output: the last stage's work in
// one step, forward and backward of each micro-batch in turn.
struct HeadLoss {
  torch::nn::Sequential model;
  torch::nn::AnyModule head;
  double run(const at::Tensor& x, const at::Tensor& targets, const std::string& precision) {
    model->zero_grad();
    train::PrecisionGuard guard(precision, at::kCPU);
    double loss = 0;
    for (int m = 0; m < kMicroBatches; ++m) {
      at::Tensor input = x.detach().requires_grad_();
      at::Tensor micro = models::modelOutputLoss(model, head.forward(input), targets);
      micro.backward();
      loss = micro.item<double>();
    }
    return loss;
  }
};

HeadLoss headLoss(bool fused, const std::shared_ptr<Communicator>& tp) {
  torch::nn::Sequential model = models::buildGpt(headConfig(fused), tp);
  return {model, pipeline::layersOf(model).back()};
}

// Seconds of one step, the median of kRunsPerRound.
double roundSeconds(HeadLoss& side, const at::Tensor& x, const at::Tensor& targets,
                    const std::string& precision, double& loss) {
  std::vector<double> seconds;
  for (int i = 0; i < kRunsPerRound; ++i) {
    auto start = std::chrono::steady_clock::now();
    loss = side.run(x, targets, precision);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(seconds);
}

void compare(const std::string& precision, const std::shared_ptr<Communicator>& tp) {
  HeadLoss sides[2] = {headLoss(false, tp), headLoss(true, tp)};
  torch::manual_seed(3);
  at::Tensor x = torch::randn({kSeq, kBatch, kHidden});                       // [s, b, hidden]
  at::Tensor targets = torch::randint(kVocab, {kBatch, kSeq}, torch::kLong);  // [b, s]
  std::vector<double> seconds[2];
  double losses[2] = {0, 0};
  for (int side : {0, 1}) sides[side].run(x, targets, precision);  // warm-up
  for (int round = 0; round < kRounds; ++round) {
    for (int k : {0, 1}) {
      int side = (round % 2 == 0) ? k : 1 - k;
      seconds[side].push_back(roundSeconds(sides[side], x, targets, precision, losses[side]));
    }
  }
  double unfused = median(seconds[0]), fused = median(seconds[1]);
  if (tp->rank() != 0) return;
  emitJson({{"bench", "head_loss"},
            {"precision", precision},
            {"tp", tp->size()},
            {"vocab", kVocab},
            {"tokens", kSeq * kBatch},
            {"microbatches", kMicroBatches},
            {"unfused_ms", jsonNumber(unfused * 1e3)},
            {"fused_ms", jsonNumber(fused * 1e3)},
            {"speedup", jsonNumber(unfused / fused)},
            {"loss_diff", jsonNumber(std::abs(losses[1] - losses[0]))}});
}

double peakResidentMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB
}

void compareMemory(const std::shared_ptr<Communicator>& tp) {
  constexpr int64_t kLongSeq = 1024, kLongBatch = 4;
  torch::manual_seed(4);
  at::Tensor x = torch::randn({kLongSeq, kLongBatch, kHidden});                       // [s, b, h]
  at::Tensor targets = torch::randint(kVocab, {kLongBatch, kLongSeq}, torch::kLong);  // [b, s]
  double peaks[2];
  for (bool fused : {true, false}) {
    HeadLoss side = headLoss(fused, tp);
    at::Tensor input = x.detach().requires_grad_();
    models::modelOutputLoss(side.model, side.head.forward(input), targets).backward();
    peaks[fused ? 0 : 1] = peakResidentMb();
  }
  if (tp->rank() != 0) return;
  emitJson({{"bench", "head_loss_memory"},
            {"precision", "fp32"},
            {"tp", tp->size()},
            {"tokens", kLongSeq * kLongBatch},
            {"peak_rss_fused_mb", jsonNumber(peaks[0])},
            {"peak_rss_unfused_mb", jsonNumber(peaks[1])}});
}

int runRank() {
  at::set_num_threads(1);
  auto world = World::init();
  std::shared_ptr<Communicator> tp = world->worldComm();
  compare("fp32", tp);
  try {
    train::checkPrecisionSupported("bf16", at::kCPU);
    compare("bf16", tp);
  } catch (const ConfigError& skipped) {
    if (tp->rank() == 0) std::cerr << "bench_head_loss: no bf16: " << skipped.what() << "\n";
  }
  compareMemory(tp);
  return 0;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) {
  try {
    if (strata::bench::spawnRanksIfParent(2, argv, {}, std::chrono::seconds(600))) return 0;
    return strata::bench::runRank();
  } catch (const std::exception& error) {
    std::cerr << "bench_head_loss: " << error.what() << "\n";
    return 1;
  }
}

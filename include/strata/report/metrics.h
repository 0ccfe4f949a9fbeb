// Per-step training metrics and the JSONL file they are appended to.
//
// One JSON object per line, keys in a fixed order, written by
// strata/util/json.h: numbers read back exactly, and a field not measured
// (NaN) or not finite (a diverged loss) is null. The
// writer flushes after each line so a crashed run keeps every step it
// reported. Blocks on file I/O only; throws Error naming the path when the
// file cannot be opened or written.
#pragma once

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace strata::train {

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

// A rank whose compute time in a step exceeded train.straggler_factor x the
// median over the ranks (stragglers.h).
struct Straggler {
  int rank = 0;
  std::string host;
  double computeSeconds = 0;
};

struct StepMetrics {
  int64_t step = 0;
  double loss = kNotMeasured;            // training loss of this step
  double validationLoss = kNotMeasured;  // only on evaluation steps
  double lr = kNotMeasured;
  double gradNorm = kNotMeasured;  // global, before clipping
  double tokensPerSecond = kNotMeasured;
  double mfu = kNotMeasured;                  // model FLOP/s / peak FLOP/s, 0..1
  double peakMemoryBytes = kNotMeasured;      // resident set, largest rank
  double peakCudaMemoryBytes = kNotMeasured;  // CUDA allocator, largest rank (GPU runs)
  double bubble = kNotMeasured;               // pipeline idle share, 0..1
  int64_t skippedSteps = 0;                   // steps skipped for a non-finite loss or norm so far
  // On the steps the ranks compared their compute (train.straggler_every):
  // the median over the ranks, the ranks above the factor, and every rank's
  // compute by global rank (the report shows the balance across the layout).
  double computeMedianSeconds = kNotMeasured;
  std::vector<Straggler> stragglers;
  std::vector<double> rankComputeSeconds;
  // Mixture-of-experts routing (trainer.h's MoeReport), in the file only for
  // models with model.moe: the assignments an expert of a layer received
  // this step (min, mean, max over layers and experts), those dropped at
  // capacity, the unscaled routing losses, and rank 0's time in the
  // dispatch and combine all-to-alls.
  double moeTokensMin = kNotMeasured;
  double moeTokensMean = kNotMeasured;
  double moeTokensMax = kNotMeasured;
  double moeDropped = kNotMeasured;
  double moeAuxLoss = kNotMeasured;
  double moeZLoss = kNotMeasured;
  double moeExchangeSeconds = kNotMeasured;
};

// {"step":10,"loss":2.5,"val_loss":null,"lr":0.001,...}
std::string toJsonLine(const StepMetrics& metrics);

class MetricsWriter {
 public:
  // A fresh run (resumedAt < 0) truncates `path`. A run resumed from the
  // checkpoint of step S keeps the lines of steps up to S and drops the later
  // ones (logged before a crash; the run repeats those steps), rewriting the
  // file atomically, then appends.
  explicit MetricsWriter(const std::string& path, int64_t resumedAt = -1);
  void write(const StepMetrics& metrics);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace strata::train

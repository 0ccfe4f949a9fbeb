// The whole training run around Trainer::step(): resume, progress on rank 0
// every train.log_every steps (a bar on a terminal, plain lines otherwise),
// metrics JSONL, evaluation, checkpoints every checkpoint.every steps and at
// the end, report.html (run_report.h) rewritten on rank 0 at every log step
// and once more when the run ends, and at the end the pictures in
// train.out_dir: loss.svg (training and validation loss) and timeline.svg /
// timeline-simulated.svg (the last step's measured pipeline timeline next to
// the simulator's, fed with the measured stage costs).
//
// A collective over the whole job, like every step. Throws what Trainer
// throws; file errors name the path.
#pragma once

#include <ostream>
#include <string>

#include "strata/train/trainer.h"

namespace strata::train {

struct TrainSummary {
  std::string architecture;    // model.architecture: "strata", "gpt2", "llama"
  std::string layout;          // "pp 2 x dp 1 x tp 2"
  int64_t steps = 0;           // completed, including those before a resume
  double lossStart = 0;        // the first step this run made
  double lossEnd = 0;          // the last step
  double validationLoss = 0;   // at the end
  double tokensPerSecond = 0;  // over the steps of this run, without evaluation and saves
  double mfu = 0;              // model FLOP/s over (measured peak x workers)
  double peakFlopsPerWorker = 0;
  int64_t skippedSteps = 0;  // this run's steps skipped for a non-finite loss or norm
  int64_t rollBacks = 0;     // rollbacks after train.max_skipped_steps of them in a row
};

TrainSummary runTraining(Trainer& trainer, std::ostream& log);

// {"<key>":"<architecture>","layout":...,"steps":...,"loss_start":...,"loss_end":...,
//  "val_loss":...,"tokens_per_s":...,"mfu":...,"skipped_steps":...} on one line, a non-finite
// value (a diverged loss) as null.
std::string summaryJson(const TrainSummary& summary, const std::string& key);

}  // namespace strata::train

// Progress reports on rank 0.
//
// On a terminal: one bar redrawn in place,
//   [#########...........]  120/300  loss 2.314  lr 8.1e-04  12.3k tok/s  ETA 1m23s
// otherwise (a log file, CI): one plain line per report,
//   step 120/300  loss 2.3141  lr 8.10e-04  grad 0.820  12.3k tok/s  mfu 31.0%
//     mem 312 MiB  bubble 25%  ETA 1m23s
// (mem: the largest rank's peak resident set, with "cuda" its CUDA peak on a
// GPU; bubble: this rank's pipeline idle share; each only where measured).
// The caller passes the elapsed time, so nothing here reads a clock, blocks
// or throws.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "strata/report/metrics.h"

namespace strata::train {

class ProgressReporter {
 public:
  // `firstStep` is where this run started (after a resume), so the ETA uses
  // only steps this run made.
  ProgressReporter(std::ostream& out, bool terminal, int64_t totalSteps, int64_t firstStep = 0);

  // `metrics.step` counts completed steps.
  void report(const StepMetrics& metrics, double elapsedSeconds);
  // Ends the bar's line on a terminal.
  void finish();

 private:
  std::string bar(int64_t step) const;

  std::ostream& out_;
  bool terminal_;
  int64_t totalSteps_;
  int64_t firstStep_;
  bool drawn_ = false;
};

}  // namespace strata::train

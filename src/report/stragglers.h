// Stragglers named: every train.straggler_every steps the ranks gather the
// compute time of their step (forward and backward work, without the waits
// for pipeline peers: StepReport::computeSeconds), and a rank above
// train.straggler_factor x the median over the job is named, with its host.
// A slow GPU, a throttled CPU or a noisy neighbour shows up this way long
// before it costs a timeout: every other rank waits for it each step.
//
// Collective over the whole job (an all-gather on the world group), bounded
// by its timeout like every step.
#pragma once

#include <string>
#include <vector>

#include "strata/report/metrics.h"
#include "strata/runtime/communicator.h"

namespace strata::train {

class StragglerWatch {
 public:
  // Gathers every rank's host name once (collective).
  StragglerWatch(Communicator& world, double factor);

  struct Comparison {
    double medianSeconds = 0;
    std::vector<Straggler> stragglers;  // ascending rank
    std::vector<double> seconds;        // every rank's, by global rank
  };
  // Every rank's compute of this step against the median; the same result
  // on every rank (collective).
  Comparison compare(double computeSeconds);

 private:
  Communicator& world_;
  double factor_;
  std::vector<std::string> hosts_;
};

// "strata train: straggler at step 200: rank 3 (node-b) computed 0.41 s, 3.4 x
// the median 0.12 s of the 4 ranks (straggler factor 1.5)"
std::string stragglerLine(int64_t step, const Straggler& straggler, double medianSeconds, int ranks,
                          double factor);

}  // namespace strata::train

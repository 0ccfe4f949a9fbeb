// The timing simulator: runs a schedule on paper under blocking point-to-point
// semantics (an action starts when its rank is free and its inputs have
// arrived) and reports the makespan, every rank's busy and idle time and
// bubble fraction, and the peak activation stash (stash.h).
//
// simulate() first validates the schedule and throws ValidationError if it
// would not run; it throws ScheduleError naming the values for a negative or
// non-finite cost or latency, or a per-stage table whose size is not the
// number of stages.
#pragma once

#include <vector>

#include "strata/schedule/schedule.h"
#include "strata/schedule/timeline.h"

namespace strata::schedule {

// Durations of one microbatch's work on one stage, in any unit (the results
// use the same unit). A full backward B usually costs about I + W.
struct StageCosts {
  double forward = 1;
  double backward = 2;
  double backwardInput = 1;
  double backwardWeight = 1;
};

struct CostModel {
  StageCosts uniform;                // used for every stage when perStage is empty
  std::vector<StageCosts> perStage;  // one entry per stage, e.g. measured
  double latency = 0;                // added to every hand-off between different ranks

  double costOf(const Action& action) const;
};

struct TimedAction {
  int rank = 0;
  int step = 0;
  Action action;
  double start = 0;
  double end = 0;
};

struct RankSummary {
  double busy = 0;
  double idle = 0;            // makespan - busy: waiting for peers, latency, warm-up, drain
  double bubbleFraction = 0;  // idle / makespan
  int peakStash = 0;
};

struct SimulationResult {
  double makespan = 0;
  std::vector<TimedAction> actions;  // every action, rank by rank in list order
  std::vector<RankSummary> ranks;
  std::vector<int> peakStashPerStage;

  double meanBubbleFraction() const;
  double maxBubbleFraction() const;
  int maxPeakStash() const;
};

SimulationResult simulate(const Schedule& schedule, const CostModel& costs);

// Labels are the actions' text forms, kinds their letters.
Timeline toTimeline(const SimulationResult& result);

}  // namespace strata::schedule

// The timing simulator: runs a schedule on paper under blocking point-to-point
// semantics (an action starts when its rank is free and its inputs have
// arrived; an overlapped pair when the inputs of both have) and reports the
// makespan, every rank's busy and idle time and bubble fraction, the peak
// activation stash (stash.h) and the number of messages between ranks.
//
// simulate() first validates the schedule and throws ValidationError if it
// would not run; it throws ScheduleError naming the values for a negative or
// non-finite cost or latency, an overlap outside [0, 1], or a per-stage table
// whose size is not the number of stages.
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
  // The share of the shorter action of an overlapped pair hidden under the
  // longer: 0 runs them back to back, as one CPU thread or one GPU stream
  // does; 1 hides it completely, the most overlapping can give.
  double overlap = 0;

  double costOf(const Action& action) const;
  // first + second - overlap * min(first, second).
  double costOfOverlapped(const Action& first, const Action& second) const;
};

struct TimedAction {
  int rank = 0;
  int step = 0;
  Action action;
  double start = 0;
  double end = 0;
  // Issued with the next entry of SimulationResult::actions, an overlapped
  // pair: both entries carry the pair's start and end.
  bool overlapsNext = false;
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
  int messages = 0;  // activations and input gradients sent from one rank to another

  double meanBubbleFraction() const;
  double maxBubbleFraction() const;
  int maxPeakStash() const;
};

SimulationResult simulate(const Schedule& schedule, const CostModel& costs);

// Labels are the actions' text forms, kinds their letters; an overlapped pair
// is one item, labelled and kinded by its two joined with '+' (0F5+7B2, F+B).
Timeline toTimeline(const SimulationResult& result);

}  // namespace strata::schedule

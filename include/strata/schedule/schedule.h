// A pipeline schedule: for every rank, the ordered list of actions it runs.
//
// Stages may outnumber ranks (interleaved / virtual stages); a stage-to-rank
// map says which rank runs each stage, round-robin (`stage % ranks`) unless
// given. Construction throws ScheduleError for non-positive sizes, a map entry
// outside [0, ranks), or a rank that owns no stage. Adding actions checks only
// the rank index; whether the actions form a runnable schedule is the
// validator's job (validator.h), so that hand-written schedules get its
// detailed report.
#pragma once

#include <cstddef>
#include <vector>

#include "strata/schedule/action.h"

namespace strata::schedule {

class Schedule {
 public:
  // Stage s runs on rank s % ranks.
  Schedule(int ranks, int stages, int microbatches);
  // stageRanks[s] is the rank that runs stage s.
  Schedule(int ranks, int microbatches, std::vector<int> stageRanks);

  int ranks() const { return static_cast<int>(actions_.size()); }
  int stages() const { return static_cast<int>(stageRanks_.size()); }
  int microbatches() const { return microbatches_; }

  // Throws ScheduleError for a stage out of range.
  int rankOf(int stage) const;
  const std::vector<int>& stageRanks() const { return stageRanks_; }
  // The stages a rank runs, in increasing order.
  std::vector<int> stagesOn(int rank) const;
  bool hasRoundRobinPlacement() const;

  // Throws ScheduleError for a rank out of range.
  const std::vector<Action>& actions(int rank) const;
  void append(int rank, const Action& action);
  std::size_t actionCount() const;

 private:
  void checkRank(int rank) const;

  std::vector<int> stageRanks_;
  int microbatches_;
  std::vector<std::vector<Action>> actions_;
};

}  // namespace strata::schedule

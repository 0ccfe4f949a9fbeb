// A pipeline schedule: for every rank, the ordered list of actions it runs.
//
// Stages may outnumber ranks (interleaved / virtual stages); a stage-to-rank
// map says which rank runs each stage, round-robin (`stage % ranks`) unless
// given (vPlacement gives the V of zb-v and dualpipe-v). Construction throws
// ScheduleError for non-positive sizes, a map entry outside [0, ranks), or a
// rank that owns no stage.
//
// Two neighbouring actions of a rank may be an overlapped pair: the rank
// issues them together and runs them at the same time (DualPipe overlaps one
// micro-batch's forward with another's backward). A runner that cannot
// overlap may run the pair's actions one after the other, in list order.
//
// Adding actions checks only the rank index; whether the actions form a
// runnable schedule is the validator's job (validator.h), so that
// hand-written schedules get its detailed report.
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
  // Appends `first` and `second` as an overlapped pair.
  void appendOverlapped(int rank, const Action& first, const Action& second);
  std::size_t actionCount() const;

  // Whether the action at `step` of the rank's list is issued together with
  // the one at step + 1 (or, for overlapsPrevious, with the one at step - 1).
  // False for a step out of range; throws ScheduleError for a bad rank.
  bool overlapsNext(int rank, int step) const;
  bool overlapsPrevious(int rank, int step) const;

 private:
  void checkRank(int rank) const;

  std::vector<int> stageRanks_;
  int microbatches_;
  std::vector<std::vector<Action>> actions_;
  std::vector<std::vector<bool>> overlapsNext_;  // parallel to actions_
};

// The V placement of 2 * ranks stages: rank r runs stages r and
// 2 * ranks - 1 - r, so rank 0 holds the first and the last stage, and the
// hand-off between the V's two arms stays on rank ranks - 1. Throws
// ScheduleError for ranks < 1.
std::vector<int> vPlacement(int ranks);

}  // namespace strata::schedule

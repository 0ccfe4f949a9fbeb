#include "strata/schedule/schedule.h"

#include <string>
#include <utility>

#include "strata/schedule/error.h"

namespace strata::schedule {
namespace {

std::vector<int> roundRobin(int ranks, int stages) {
  if (ranks < 1) throw ScheduleError("ranks must be >= 1, got " + std::to_string(ranks));
  if (stages < 1) throw ScheduleError("stages must be >= 1, got " + std::to_string(stages));
  std::vector<int> stageRanks(stages);
  for (int stage = 0; stage < stages; ++stage) stageRanks[stage] = stage % ranks;
  return stageRanks;
}

}  // namespace

Schedule::Schedule(int ranks, int stages, int microbatches)
    : Schedule(ranks, microbatches, roundRobin(ranks, stages)) {}

Schedule::Schedule(int ranks, int microbatches, std::vector<int> stageRanks)
    : stageRanks_(std::move(stageRanks)), microbatches_(microbatches) {
  if (ranks < 1) throw ScheduleError("ranks must be >= 1, got " + std::to_string(ranks));
  if (microbatches < 1) {
    throw ScheduleError("microbatches must be >= 1, got " + std::to_string(microbatches));
  }
  if (stageRanks_.empty()) throw ScheduleError("a schedule needs at least one stage");
  std::vector<bool> ownsStage(ranks, false);
  for (int stage = 0; stage < stages(); ++stage) {
    const int rank = stageRanks_[stage];
    if (rank < 0 || rank >= ranks) {
      throw ScheduleError("stage " + std::to_string(stage) + " is placed on rank " +
                          std::to_string(rank) + ", but there are " + std::to_string(ranks) +
                          " ranks");
    }
    ownsStage[rank] = true;
  }
  for (int rank = 0; rank < ranks; ++rank) {
    if (!ownsStage[rank]) {
      throw ScheduleError("rank " + std::to_string(rank) + " owns no stage (" +
                          std::to_string(stages()) + " stages on " + std::to_string(ranks) +
                          " ranks)");
    }
  }
  actions_.resize(ranks);
  overlapsNext_.resize(ranks);
}

int Schedule::rankOf(int stage) const {
  if (stage < 0 || stage >= stages()) {
    throw ScheduleError("stage " + std::to_string(stage) + " is out of range: the schedule has " +
                        std::to_string(stages()) + " stages");
  }
  return stageRanks_[stage];
}

std::vector<int> Schedule::stagesOn(int rank) const {
  checkRank(rank);
  std::vector<int> stages;
  for (int stage = 0; stage < this->stages(); ++stage) {
    if (stageRanks_[stage] == rank) stages.push_back(stage);
  }
  return stages;
}

bool Schedule::hasRoundRobinPlacement() const {
  for (int stage = 0; stage < stages(); ++stage) {
    if (stageRanks_[stage] != stage % ranks()) return false;
  }
  return true;
}

const std::vector<Action>& Schedule::actions(int rank) const {
  checkRank(rank);
  return actions_[rank];
}

void Schedule::append(int rank, const Action& action) {
  checkRank(rank);
  actions_[rank].push_back(action);
  overlapsNext_[rank].push_back(false);
}

void Schedule::appendOverlapped(int rank, const Action& first, const Action& second) {
  append(rank, first);
  overlapsNext_[rank].back() = true;
  append(rank, second);
}

std::size_t Schedule::actionCount() const {
  std::size_t count = 0;
  for (const auto& list : actions_) count += list.size();
  return count;
}

bool Schedule::overlapsNext(int rank, int step) const {
  checkRank(rank);
  return step >= 0 && step < static_cast<int>(overlapsNext_[rank].size()) &&
         overlapsNext_[rank][step];
}

bool Schedule::overlapsPrevious(int rank, int step) const { return overlapsNext(rank, step - 1); }

void Schedule::checkRank(int rank) const {
  if (rank < 0 || rank >= ranks()) {
    throw ScheduleError("rank " + std::to_string(rank) + " is out of range: the schedule has " +
                        std::to_string(ranks()) + " ranks");
  }
}

std::vector<int> vPlacement(int ranks) {
  if (ranks < 1) throw ScheduleError("ranks must be >= 1, got " + std::to_string(ranks));
  std::vector<int> stageRanks(2 * ranks);
  for (int rank = 0; rank < ranks; ++rank) {
    stageRanks[rank] = rank;
    stageRanks[2 * ranks - 1 - rank] = rank;
  }
  return stageRanks;
}

}  // namespace strata::schedule

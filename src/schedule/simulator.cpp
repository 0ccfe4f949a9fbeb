#include "strata/schedule/simulator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "action_index.h"
#include "strata/schedule/error.h"
#include "strata/schedule/stash.h"
#include "strata/schedule/validator.h"

namespace strata::schedule {
namespace {

void requireDuration(const std::string& what, double value) {
  if (!std::isfinite(value) || value < 0) {
    throw ScheduleError(what + " must be a finite value >= 0, got " + std::to_string(value));
  }
}

void checkStageCosts(const StageCosts& costs, const std::string& where) {
  requireDuration(where + " forward cost", costs.forward);
  requireDuration(where + " backward cost", costs.backward);
  requireDuration(where + " backward-input cost", costs.backwardInput);
  requireDuration(where + " backward-weight cost", costs.backwardWeight);
}

void checkCostModel(const CostModel& costs, const Schedule& schedule) {
  requireDuration("latency", costs.latency);
  if (costs.perStage.empty()) {
    checkStageCosts(costs.uniform, "uniform");
    return;
  }
  if (static_cast<int>(costs.perStage.size()) != schedule.stages()) {
    throw ScheduleError("the cost table has " + std::to_string(costs.perStage.size()) +
                        " stages, but the schedule has " + std::to_string(schedule.stages()));
  }
  for (std::size_t stage = 0; stage < costs.perStage.size(); ++stage) {
    checkStageCosts(costs.perStage[stage], "stage " + std::to_string(stage));
  }
}

}  // namespace

double CostModel::costOf(const Action& action) const {
  const StageCosts& costs = perStage.empty() ? uniform : perStage.at(action.stage);
  switch (action.kind) {
    case ActionKind::kForward:
      return costs.forward;
    case ActionKind::kBackward:
      return costs.backward;
    case ActionKind::kBackwardInput:
      return costs.backwardInput;
    case ActionKind::kBackwardWeight:
      return costs.backwardWeight;
  }
  return 0;
}

double SimulationResult::meanBubbleFraction() const {
  if (ranks.empty()) return 0;
  double sum = 0;
  for (const RankSummary& rank : ranks) sum += rank.bubbleFraction;
  return sum / static_cast<double>(ranks.size());
}

double SimulationResult::maxBubbleFraction() const {
  double worst = 0;
  for (const RankSummary& rank : ranks) worst = std::max(worst, rank.bubbleFraction);
  return worst;
}

int SimulationResult::maxPeakStash() const {
  int worst = 0;
  for (const RankSummary& rank : ranks) worst = std::max(worst, rank.peakStash);
  return worst;
}

namespace {

// Per rank, per step: when each action starts and ends.
std::vector<std::vector<TimedAction>> timeActions(const Schedule& schedule,
                                                  const CostModel& costs) {
  const ActionIndex index(schedule);
  std::vector<std::vector<TimedAction>> timed(schedule.ranks());
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    timed[rank].resize(schedule.actions(rank).size());
  }
  std::vector<double> rankFree(schedule.ranks(), 0);
  // The blocking run's order puts every input before its consumer, so one
  // pass sees each input's finish time before it is needed.
  for (const Slot& slot : runBlocking(schedule, index).order) {
    const Action& action = schedule.actions(slot.rank)[slot.step];
    double start = rankFree[slot.rank];
    for (const Action& input : inputsOf(action, schedule, index)) {
      const Slot source = *index.find(input);
      const double hop = source.rank == slot.rank ? 0 : costs.latency;
      start = std::max(start, timed[source.rank][source.step].end + hop);
    }
    const double end = start + costs.costOf(action);
    timed[slot.rank][slot.step] = {slot.rank, slot.step, action, start, end};
    rankFree[slot.rank] = end;
  }
  return timed;
}

}  // namespace

SimulationResult simulate(const Schedule& schedule, const CostModel& costs) {
  validate(schedule);
  checkCostModel(costs, schedule);
  SimulationResult result;
  result.ranks.resize(schedule.ranks());
  for (const auto& rankActions : timeActions(schedule, costs)) {
    for (const TimedAction& timed : rankActions) {
      result.actions.push_back(timed);
      result.ranks[timed.rank].busy += timed.end - timed.start;
      result.makespan = std::max(result.makespan, timed.end);
    }
  }
  const StashPeaks peaks = peakStash(schedule);
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    RankSummary& summary = result.ranks[rank];
    summary.idle = result.makespan - summary.busy;
    summary.bubbleFraction = result.makespan > 0 ? summary.idle / result.makespan : 0;
    summary.peakStash = peaks.perRank[rank];
  }
  result.peakStashPerStage = peaks.perStage;
  return result;
}

Timeline toTimeline(const SimulationResult& result) {
  Timeline timeline;
  timeline.ranks = static_cast<int>(result.ranks.size());
  for (const TimedAction& timed : result.actions) {
    timeline.items.push_back({timed.rank, toString(timed.action),
                              std::string(1, kindLetter(timed.action.kind)), timed.start,
                              timed.end});
  }
  return timeline;
}

}  // namespace strata::schedule

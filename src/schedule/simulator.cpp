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
  if (!(costs.overlap >= 0 && costs.overlap <= 1)) {
    throw ScheduleError("overlap must be in [0, 1], got " + std::to_string(costs.overlap));
  }
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

double CostModel::costOfOverlapped(const Action& first, const Action& second) const {
  const double a = costOf(first), b = costOf(second);
  return a + b - overlap * std::min(a, b);
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

using TimedRanks = std::vector<std::vector<TimedAction>>;

// When the last input of the action at `consumer` reaches its rank.
double inputsArrive(const Schedule& schedule, const ActionIndex& index, const CostModel& costs,
                    const TimedRanks& timed, const Slot& consumer) {
  double arrival = 0;
  for (const Action& input :
       inputsOf(schedule.actions(consumer.rank)[consumer.step], schedule, index)) {
    const Slot source = *index.find(input);
    const double hop = source.rank == consumer.rank ? 0 : costs.latency;
    arrival = std::max(arrival, timed[source.rank][source.step].end + hop);
  }
  return arrival;
}

double durationOf(const Schedule& schedule, const std::vector<Slot>& issued,
                  const CostModel& costs) {
  const auto& actions = schedule.actions(issued.front().rank);
  const Action& first = actions[issued.front().step];
  if (issued.size() == 1) return costs.costOf(first);
  return costs.costOfOverlapped(first, actions[issued.back().step]);
}

// Per rank, per step: when each action starts and ends.
TimedRanks timeActions(const Schedule& schedule, const CostModel& costs, const ActionIndex& index) {
  TimedRanks timed(schedule.ranks());
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    timed[rank].resize(schedule.actions(rank).size());
  }
  std::vector<double> rankFree(schedule.ranks(), 0);
  // The blocking run's order puts every input before its consumer, so one
  // pass sees each input's finish time before it is needed.
  for (const Slot& slot : runBlocking(schedule, index).order) {
    if (schedule.overlapsPrevious(slot.rank, slot.step)) continue;  // timed with its partner
    const std::vector<Slot> issued = issuedTogether(schedule, slot);
    double start = rankFree[slot.rank];
    for (const Slot& consumer : issued) {
      start = std::max(start, inputsArrive(schedule, index, costs, timed, consumer));
    }
    const double end = start + durationOf(schedule, issued, costs);
    for (const Slot& member : issued) {
      const Action& action = schedule.actions(member.rank)[member.step];
      const bool overlapsNext = schedule.overlapsNext(member.rank, member.step);
      timed[member.rank][member.step] = {member.rank, member.step, action,
                                         start,       end,         overlapsNext};
    }
    rankFree[slot.rank] = end;
  }
  return timed;
}

int countMessages(const Schedule& schedule, const ActionIndex& index) {
  int messages = 0;
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    for (const Action& action : schedule.actions(rank)) {
      for (const Action& input : inputsOf(action, schedule, index)) {
        if (index.find(input)->rank != rank) ++messages;
      }
    }
  }
  return messages;
}

}  // namespace

SimulationResult simulate(const Schedule& schedule, const CostModel& costs) {
  validate(schedule);
  checkCostModel(costs, schedule);
  const ActionIndex index(schedule);
  SimulationResult result;
  result.ranks.resize(schedule.ranks());
  for (const auto& rankActions : timeActions(schedule, costs, index)) {
    for (std::size_t step = 0; step < rankActions.size(); ++step) {
      const TimedAction& timed = rankActions[step];
      result.actions.push_back(timed);
      // The two actions of an overlapped pair share one span: count it once.
      if (step == 0 || !rankActions[step - 1].overlapsNext) {
        result.ranks[timed.rank].busy += timed.end - timed.start;
      }
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
  result.messages = countMessages(schedule, index);
  return result;
}

Timeline toTimeline(const SimulationResult& result) {
  Timeline timeline;
  timeline.ranks = static_cast<int>(result.ranks.size());
  const std::vector<TimedAction>& actions = result.actions;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const TimedAction& timed = actions[i];
    std::string label = toString(timed.action);
    std::string kind(1, kindLetter(timed.action.kind));
    if (timed.overlapsNext && i + 1 < actions.size()) {
      const Action& partner = actions[++i].action;
      label += "+" + toString(partner);
      kind += std::string("+") + kindLetter(partner.kind);
    }
    timeline.items.push_back({timed.rank, label, kind, timed.start, timed.end});
  }
  return timeline;
}

}  // namespace strata::schedule

#include "strata/pipeline/trace.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>

namespace strata::pipeline {
namespace {

// One event on the wire: [rank, stage, kind letter, micro-batch, isWait, start, end].
constexpr int64_t kFields = 7;

at::Tensor encode(const std::vector<TraceEvent>& events) {
  at::Tensor rows = torch::empty({static_cast<int64_t>(events.size()), kFields}, torch::kFloat64);
  auto view = rows.accessor<double, 2>();
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    double fields[kFields] = {double(e.rank),
                              double(e.action.stage),
                              double(schedule::kindLetter(e.action.kind)),
                              double(e.action.microbatch),
                              e.isWait ? 1.0 : 0.0,
                              e.start,
                              e.end};
    for (int64_t f = 0; f < kFields; ++f) view[i][f] = fields[f];
  }
  return rows;
}

void decodeInto(const at::Tensor& rows, std::vector<TraceEvent>& events) {
  auto view = rows.accessor<double, 2>();
  for (int64_t i = 0; i < rows.size(0); ++i) {
    TraceEvent e;
    e.rank = static_cast<int>(view[i][0]);
    e.action.stage = static_cast<int>(view[i][1]);
    e.action.kind = schedule::kindFromLetter(static_cast<char>(view[i][2]));
    e.action.microbatch = static_cast<int>(view[i][3]);
    e.isWait = view[i][4] != 0;
    e.start = view[i][5];
    e.end = view[i][6];
    events.push_back(e);
  }
}

}  // namespace

schedule::Timeline toTimeline(const std::vector<TraceEvent>& events, int ranks, double origin) {
  schedule::Timeline timeline;
  timeline.ranks = ranks;
  timeline.timeUnit = "ms";
  for (const TraceEvent& e : events) {
    std::string label = schedule::toString(e.action);
    timeline.items.push_back(schedule::TimelineItem{
        e.rank, e.isWait ? "wait " + label : label,
        e.isWait ? "wait" : std::string(1, schedule::kindLetter(e.action.kind)),
        (e.start - origin) * 1000.0, (e.end - origin) * 1000.0});
  }
  return timeline;
}

double earliestStart(const std::vector<TraceEvent>& events) {
  if (events.empty()) return 0;
  double earliest = std::numeric_limits<double>::infinity();
  for (const TraceEvent& e : events) earliest = std::min(earliest, e.start);
  return earliest;
}

std::vector<TraceEvent> gatherEvents(Communicator& pp, const std::vector<TraceEvent>& mine) {
  constexpr int kTag = 0x7ace;
  if (pp.rank() != 0) {
    pp.sendTensor(encode(mine), 0, kTag);
    return mine;
  }
  std::vector<TraceEvent> all = mine;
  for (int peer = 1; peer < pp.size(); ++peer) decodeInto(pp.recvTensor(peer, kTag), all);
  return all;
}

std::vector<schedule::StageCosts> measuredStageCosts(const std::vector<TraceEvent>& events,
                                                     int stages) {
  // sums[s][k], counts[s][k] for k = F, B, I, W.
  std::vector<std::array<double, 4>> sums(stages, {0, 0, 0, 0});
  std::vector<std::array<int, 4>> counts(stages, {0, 0, 0, 0});
  for (const TraceEvent& e : events) {
    if (e.isWait || e.action.stage < 0 || e.action.stage >= stages) continue;
    int k = e.action.kind == schedule::ActionKind::kForward         ? 0
            : e.action.kind == schedule::ActionKind::kBackward      ? 1
            : e.action.kind == schedule::ActionKind::kBackwardInput ? 2
                                                                    : 3;
    sums[e.action.stage][k] += e.end - e.start;
    ++counts[e.action.stage][k];
  }
  auto mean = [&](int s, int k) { return counts[s][k] ? sums[s][k] / counts[s][k] : 0.0; };
  std::vector<schedule::StageCosts> costs(stages);
  for (int s = 0; s < stages; ++s) {
    costs[s] = schedule::StageCosts{mean(s, 0), mean(s, 1), mean(s, 2), mean(s, 3)};
  }
  return costs;
}

std::vector<double> measuredBubbleFractions(const std::vector<TraceEvent>& events, int ranks) {
  double first = std::numeric_limits<double>::infinity();
  double last = -first;
  std::vector<double> busy(ranks, 0);
  for (const TraceEvent& e : events) {
    first = std::min(first, e.start);
    last = std::max(last, e.end);
    if (!e.isWait && e.rank >= 0 && e.rank < ranks) busy[e.rank] += e.end - e.start;
  }
  std::vector<double> bubble(ranks, 0);
  if (!(last > first)) return bubble;
  for (int r = 0; r < ranks; ++r) bubble[r] = 1.0 - busy[r] / (last - first);
  return bubble;
}

}  // namespace strata::pipeline

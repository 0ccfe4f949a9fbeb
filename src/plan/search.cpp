#include "strata/plan/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "stage_costs.h"
#include "strata/plan/errors.h"
#include "strata/schedule/stash.h"

namespace strata::plan {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// Every combination of the knobs for fixed parallel degrees.
std::vector<Layout> variants(const Layout& base, const SearchOptions& o) {
  std::vector<Layout> out;
  for (const std::string& schedule : o.schedules) {
    std::vector<int> chunks =
        schedule == "interleaved-1f1b" ? o.virtualStages : std::vector<int>{1};
    if (base.pp == 1 && schedule != o.schedules.front()) continue;  // one stage: schedules agree
    for (int v : chunks)
      for (int mb : o.microBatchSizes)
        for (int zero : o.zeroStages)
          for (bool recompute : o.recompute) {
            Layout l = base;
            l.schedule = schedule;
            l.virtualStages = v;
            l.microBatch = mb;
            l.zeroStage = zero;
            l.recompute = recompute;
            l.sequenceParallel = l.tp > 1;
            out.push_back(l);
          }
  }
  return out;
}

std::vector<Layout> candidates(const TrainingJob& job, const SearchOptions& o) {
  std::vector<Layout> out;
  int devices = job.cluster.totalDevices();
  for (int pp : divisors(devices))
    for (int tp : divisors(devices / pp)) {
      Layout base;
      base.pp = pp;
      base.tp = tp;
      base.dp = devices / (pp * tp);
      for (const Layout& l : variants(base, o)) out.push_back(l);
      // The other placement differs only when both pp and tp have groups to
      // place and there are nodes to place them on.
      if (pp == 1 || tp == 1 || job.cluster.nodes == 1) continue;
      base.ppInner = true;
      for (const Layout& l : variants(base, o)) out.push_back(l);
    }
  return out;
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

// A reason with its numbers blanked, so that reasons of one rule group together.
std::string ruleOf(const std::string& why) {
  std::string rule;
  for (char c : why) {
    bool digit = c >= '0' && c <= '9';
    if (!digit || rule.empty() || rule.back() != '#') rule += digit ? '#' : c;
  }
  return rule;
}

struct RuleCount {
  int count = 0;
  std::string example;
};

[[noreturn]] void failNoValid(const TrainingJob& job, const std::map<std::string, RuleCount>& rules,
                              int considered) {
  std::ostringstream msg;
  msg << "no layout of " << job.cluster.totalDevices() << " devices can run " << job.model.name
      << " with global batch " << job.globalBatch << "; of " << considered
      << " layouts considered:";
  for (const auto& entry : rules)
    msg << "\n  " << entry.second.count << " fail because, e.g., " << entry.second.example;
  throw PlanError(msg.str());
}

// Evaluates the valid candidates. Shortcuts that cannot change the answer:
// a layout whose model state alone overflows the device is not simulated;
// the ZeRO variants of one pipeline share one simulation; and recompute is
// skipped when the same layout fits without it (recompute only adds time).
class Evaluator {
 public:
  explicit Evaluator(const TrainingJob& job) : job_(job) {}

  void consider(const Layout& layout) {
    Layout twin = layout;
    twin.recompute = false;
    if (layout.recompute && fitWithoutRecompute_.count(toString(twin))) return;
    StagePlan plan = planStages(job_, layout);
    double state = largestModelStateBytes(job_, layout, plan);
    if (!fitsDevice(job_, state)) {
      leanestFloor_ = std::min(leanestFloor_, state);
      return;
    }
    Layout key = layout;
    key.zeroStage = 0;
    auto cached = timings_.find(toString(key));
    if (cached == timings_.end()) {
      schedule::Schedule pipeline = buildSchedule(layout, layout.microBatches(job_.globalBatch));
      MemoryBreakdown memory =
          peakRankMemory(job_, layout, plan, schedule::peakStash(pipeline).perRank);
      if (!fitsDevice(job_, memory.total())) {
        noteOverflow(memory.total(), layout);
        return;
      }
      cached = timings_.emplace(toString(key), timePipeline(pipeline, plan)).first;
    }
    Estimate e = estimateFrom(job_, layout, plan, cached->second);
    if (!e.fitsMemory) {
      noteOverflow(e.memory.total(), layout);
      return;
    }
    if (!layout.recompute) fitWithoutRecompute_.insert(toString(layout));
    fitting_.push_back(e);
  }

  std::vector<Estimate>& fitting() { return fitting_; }

  void noteOverflow(double bytes, const Layout& layout) {
    if (bytes < leanest_ || (bytes == leanest_ && toString(layout) < leanestLayout_)) {
      leanest_ = bytes;
      leanestLayout_ = toString(layout);
    }
  }

  [[noreturn]] void failNoFit() const {
    std::ostringstream msg;
    msg.precision(3);
    msg << "cluster too small: no layout of " << job_.cluster.totalDevices() << " devices fits "
        << job_.model.name << " in " << gib(job_.cluster.device.memoryBytes) << " GiB per device ("
        << gib(kUsableFraction * job_.cluster.device.memoryBytes)
        << " GiB usable); the least memory any layout needs is ";
    if (leanest_ <= leanestFloor_)
      msg << gib(leanest_) << " GiB per device (" << leanestLayout_ << ")";
    else
      msg << "at least " << gib(leanestFloor_)
          << " GiB per device (parameters, gradients and optimizer state alone)";
    throw PlanError(msg.str());
  }

 private:
  static constexpr double kUsableFraction = 0.9;  // as cost_model.h states
  const TrainingJob& job_;
  std::map<std::string, PipelineTiming> timings_;
  std::set<std::string> fitWithoutRecompute_;
  std::vector<Estimate> fitting_;
  double leanest_ = std::numeric_limits<double>::infinity();  // least memory of a simulated layout
  std::string leanestLayout_;
  double leanestFloor_ = std::numeric_limits<double>::infinity();
};

// Layouts that differ only in ZeRO stage show once: the best-ranked.
std::vector<Estimate> distinctPipelines(const std::vector<Estimate>& ranked, int top) {
  std::vector<Estimate> out;
  std::set<std::string> seen;
  for (const Estimate& e : ranked) {
    if (static_cast<int>(out.size()) == top) break;
    Layout key = e.layout;
    key.zeroStage = 0;
    if (seen.insert(toString(key)).second) out.push_back(e);
  }
  return out;
}

}  // namespace

bool ranksBefore(const Estimate& a, const Estimate& b) {
  if (a.samplesPerSecond != b.samplesPerSecond) return a.samplesPerSecond > b.samplesPerSecond;
  if (a.layout.pp != b.layout.pp) return a.layout.pp < b.layout.pp;
  if (a.layout.tp != b.layout.tp) return a.layout.tp < b.layout.tp;
  return toString(a.layout) < toString(b.layout);
}

SearchResult searchLayouts(const TrainingJob& job, const SearchOptions& options) {
  job.model.validate();
  SearchResult result;
  std::map<std::string, RuleCount> rules;
  Evaluator evaluator(job);
  for (const Layout& layout : candidates(job, options)) {
    ++result.considered;
    if (std::string why = checkLayout(job, layout); !why.empty()) {
      RuleCount& rule = rules[ruleOf(why)];
      if (rule.count++ == 0) rule.example = why;
      continue;
    }
    ++result.valid;
    evaluator.consider(layout);
  }
  if (result.valid == 0) failNoValid(job, rules, result.considered);
  std::vector<Estimate>& fitting = evaluator.fitting();
  if (fitting.empty()) evaluator.failNoFit();
  result.fitting = static_cast<int>(fitting.size());
  std::sort(fitting.begin(), fitting.end(), ranksBefore);
  result.best = distinctPipelines(fitting, options.top);
  return result;
}

}  // namespace strata::plan

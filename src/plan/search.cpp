#include "strata/plan/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "stage_costs.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// Every combination of the knobs for fixed parallel degrees. Sequence
// parallel whenever there is tp, but for MoE layers, which route whole
// tokens.
std::vector<Layout> variants(const TrainingJob& job, const Layout& base, const SearchOptions& o) {
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
            l.sequenceParallel = l.tp > 1 && !job.model.moe.enabled();
            out.push_back(l);
          }
  }
  return out;
}

// The context-parallel degrees and algorithms to try with `devices` left
// for cp x dp: cp 1, and every cp > 1 up to the options' that divides them
// and splits the sequence into 2 cp equal chunks (the other rules are
// checkLayout's), by ring and by all-to-all.
std::vector<std::pair<int, CpAlgorithm>> contextSplits(const TrainingJob& job, int devices,
                                                       const SearchOptions& o) {
  std::vector<std::pair<int, CpAlgorithm>> out = {{1, CpAlgorithm::kRing}};
  for (int cp : divisors(devices)) {
    if (cp == 1 || cp > o.maxContextParallel || job.model.seqLen % (2 * cp) != 0) continue;
    for (CpAlgorithm algorithm : {CpAlgorithm::kRing, CpAlgorithm::kAllToAll})
      out.push_back({cp, algorithm});
  }
  return out;
}

// The expert-parallel degrees to try with `replicas` dp x cp ranks: 1, and
// for a mixture-of-experts model every ep up to the options' that divides
// both the replicas and the experts.
std::vector<int> expertSplits(const TrainingJob& job, int replicas, const SearchOptions& o) {
  std::vector<int> out;
  for (int ep : divisors(replicas))
    if (ep == 1 ||
        (job.model.moe.enabled() && ep <= o.maxExpertParallel && job.model.moe.experts % ep == 0))
      out.push_back(ep);
  return out;
}

// Every placement and knob of fixed degrees. The other placement differs
// only when both pp and tp have groups to place and there are nodes to
// place them on.
void addVariants(const TrainingJob& job, Layout base, const SearchOptions& o,
                 std::vector<Layout>& out) {
  for (const Layout& l : variants(job, base, o)) out.push_back(l);
  if (base.pp == 1 || base.tp == 1 || job.cluster.nodes == 1) return;
  base.ppInner = true;
  for (const Layout& l : variants(job, base, o)) out.push_back(l);
}

std::vector<Layout> candidates(const TrainingJob& job, const SearchOptions& o) {
  std::vector<Layout> out;
  int devices = job.cluster.totalDevices();
  for (int pp : divisors(devices))
    for (int tp : divisors(devices / pp))
      for (auto [cp, algorithm] : contextSplits(job, devices / (pp * tp), o))
        for (int ep : expertSplits(job, devices / (pp * tp), o)) {
          Layout base;
          base.pp = pp;
          base.tp = tp;
          base.cp = cp;
          base.cpAlgorithm = algorithm;
          base.dp = devices / (pp * tp * cp);
          base.ep = ep;
          addVariants(job, base, o, out);
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

// A generated schedule, which depends only on the schedule's name, pp,
// micro-batches and v: shared by every layout alike in those (tp, cp, dp,
// ZeRO, recompute...).
struct Pipeline {
  schedule::Schedule schedule;
};

// The slack the pruning below leaves for rounding: the simulator adds the
// same costs in another order than iterationLowerBound does.
constexpr double kBoundSlack = 1e-9;

// Evaluates the valid candidates. Shortcuts that cannot change the answer:
// a layout whose model state alone overflows the device is not simulated;
// the ZeRO variants of one pipeline share one simulation; recompute is
// skipped when the same layout fits without it (recompute only adds time);
// and a layout that fits but whose throughput bound (iterationLowerBound)
// is below that of `top` distinct pipelines already found is counted as
// fitting without being simulated: it can rank neither in the top nor above
// its own pipeline's best ZeRO variant there.
class Evaluator {
 public:
  Evaluator(const TrainingJob& job, int top) : job_(job), top_(top) {}

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
      const Pipeline& pipeline = pipelineOf(layout);
      MemoryBreakdown memory = peakRankMemory(job_, layout, plan, pipeline.schedule);
      if (!fitsDevice(job_, memory.total())) {
        noteOverflow(memory.total(), layout);
        return;
      }
      if (outOfTop(layout, plan, pipeline)) {
        noteFit(layout);
        ++unsimulatedFits_;
        return;
      }
      cached = timings_.emplace(toString(key), timePipeline(pipeline.schedule, plan)).first;
    }
    Estimate e = estimateFrom(job_, layout, plan, cached->second, pipelineOf(layout).schedule);
    if (!e.fitsMemory) {
      noteOverflow(e.memory.total(), layout);
      return;
    }
    noteFit(layout);
    rank(toString(key), e.samplesPerSecond);
    fitting_.push_back(e);
  }

  std::vector<Estimate>& fitting() { return fitting_; }
  int fittingCount() const { return static_cast<int>(fitting_.size()) + unsimulatedFits_; }

  void noteOverflow(double bytes, const Layout& layout) {
    if (bytes < leanest_ || (bytes == leanest_ && toString(layout) < leanestLayout_)) {
      leanest_ = bytes;
      leanestLayout_ = toString(layout);
    }
  }

  const Pipeline& pipelineOf(const Layout& l) {
    int microBatches = l.microBatches(job_.globalBatch);
    std::string name = l.schedule + "," + std::to_string(l.pp) + "," +
                       std::to_string(microBatches) + "," + std::to_string(l.virtualStages);
    auto it = pipelines_.find(name);
    if (it != pipelines_.end()) return it->second;
    return pipelines_.emplace(name, Pipeline{buildSchedule(l, microBatches)}).first->second;
  }

  void noteFit(const Layout& layout) {
    if (!layout.recompute) fitWithoutRecompute_.insert(toString(layout));
  }

  // Keeps each pipeline's best samples/s, all of them in `ranked_` too.
  void rank(const std::string& key, double samplesPerSecond) {
    auto [it, fresh] = bestByPipeline_.emplace(key, samplesPerSecond);
    if (!fresh) {
      if (samplesPerSecond <= it->second) return;
      ranked_.erase(ranked_.find(it->second));
      it->second = samplesPerSecond;
    }
    ranked_.insert(samplesPerSecond);
  }

  // Whether even `layout`'s throughput bound falls short of the top-th best
  // pipeline's, by more than rounding.
  bool outOfTop(const Layout& layout, const StagePlan& plan, const Pipeline& pipeline) const {
    if (top_ < 1 || static_cast<int>(ranked_.size()) < top_) return false;
    double threshold = *std::prev(ranked_.end(), top_);
    double bound = iterationLowerBound(job_, layout, plan, pipeline.schedule) * (1 - kBoundSlack);
    return bound > 0 && job_.globalBatch / bound < threshold;
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
  int top_;
  std::map<std::string, Pipeline> pipelines_;
  std::map<std::string, PipelineTiming> timings_;
  std::map<std::string, double> bestByPipeline_;  // samples/s of each simulated pipeline's best
  std::multiset<double> ranked_;                  // the values of bestByPipeline_
  int unsimulatedFits_ = 0;
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
  if (a.layout.cp != b.layout.cp) return a.layout.cp < b.layout.cp;
  if (a.layout.ep != b.layout.ep) return a.layout.ep < b.layout.ep;
  return toString(a.layout) < toString(b.layout);
}

SearchResult searchLayouts(const TrainingJob& job, const SearchOptions& options) {
  job.model.validate();
  SearchResult result;
  std::map<std::string, RuleCount> rules;
  Evaluator evaluator(job, options.top);
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
  result.fitting = evaluator.fittingCount();
  std::sort(fitting.begin(), fitting.end(), ranksBefore);
  result.best = distinctPipelines(fitting, options.top);
  return result;
}

}  // namespace strata::plan

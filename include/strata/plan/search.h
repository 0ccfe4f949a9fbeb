// The search over layouts: every pp x tp x cp x dp that uses all devices
// (context parallelism, cp > 1, where 2 cp divides the sequence, by ring and
// by all-to-all attention), for a mixture-of-experts model every ep that
// divides dp x cp and the experts, with virtual stages, micro-batch size,
// schedule, ZeRO stage and recompute, kept when it passes checkLayout() and
// fits in device memory, ranked by throughput.
//
// Ranking is deterministic: samples/s descending, then fewer pipeline stages,
// then smaller tp, then smaller cp, then smaller ep, then the layout's text
// form. Layouts that differ only in ZeRO stage are listed once (the
// best-ranked); recompute is not tried where the same layout fits without
// it, since it only adds time. Sequence parallelism is switched on whenever
// tp > 1 (same traffic, less memory), but for a mixture-of-experts model,
// which the trainer runs without it. searchLayouts() throws PlanError when
// no layout passes the rules (quoting why, e.g. a batch no mb x dp divides)
// or none fits in memory (quoting the least memory any layout needs against
// what a device has).
#pragma once

#include <string>
#include <vector>

#include "strata/plan/cost_model.h"

namespace strata::plan {

struct SearchOptions {
  int top = 5;
  std::vector<std::string> schedules = {"1f1b", "interleaved-1f1b", "zb-h1",
                                        "zb-v", "dualpipe-v",       "gpipe"};
  std::vector<int> microBatchSizes = {1, 2, 4, 8};
  std::vector<int> virtualStages = {2, 3, 4};  // tried with interleaved-1f1b
  std::vector<int> zeroStages = {0, 1, 2, 3};
  std::vector<bool> recompute = {false, true};
  int maxContextParallel = 1 << 30;  // the largest cp tried; 1: no context parallelism
  int maxExpertParallel = 1 << 30;   // the largest ep tried; 1: no expert parallelism
};

struct SearchResult {
  std::vector<Estimate> best;  // at most options.top, best first
  int considered = 0;          // layouts generated
  int valid = 0;               // layouts that passed checkLayout
  int fitting = 0;             // of those, layouts that fit in memory
};

SearchResult searchLayouts(const TrainingJob& job, const SearchOptions& options = {});

// True when `a` ranks before `b` under the order above.
bool ranksBefore(const Estimate& a, const Estimate& b);

}  // namespace strata::plan

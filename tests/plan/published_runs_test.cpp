// The planner against the published runs of published_runs.toml: predicts
// every row, prints a table and the error distribution, and holds each row
// to 15% (45% where the file names a known gap). Run alone with
//   build/tests/plan/plan_tests --gtest_filter='PublishedRuns.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "strata/plan/search.h"
#include "strata/util/toml.h"

namespace strata::plan {
namespace {

struct PublishedRun {
  std::string id, source, software, flops, knownGap;
  double measured = 0;
  TrainingJob job;
  Layout layout;
};

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The keys of one [run.<id>] table, and its cluster sub-table's as a cluster
// file's text.
struct RunTables {
  std::map<std::string, util::TomlValue> keys;
  util::TomlPairs cluster;
};

std::map<std::string, RunTables> tablesOf(const std::string& path) {
  std::map<std::string, RunTables> runs;
  for (const util::TomlEntry& entry : util::readToml(fileText(path), path)) {
    std::string table = entry.table.substr(std::string("run.").size());
    size_t dot = table.rfind(".cluster");
    if (dot != std::string::npos && dot + 8 == table.size())
      runs[table.substr(0, dot)].cluster.push_back({entry.key, entry.value});
    else
      runs[table].keys[entry.key] = entry.value;
  }
  return runs;
}

double number(const std::map<std::string, util::TomlValue>& keys, const std::string& key) {
  const util::TomlValue& value = keys.at(key);
  if (auto* integer = std::get_if<int64_t>(&value)) return double(*integer);
  return std::get<double>(value);
}

std::string text(const std::map<std::string, util::TomlValue>& keys, const std::string& key) {
  auto it = keys.find(key);
  return it == keys.end() ? "" : std::get<std::string>(it->second);
}

std::optional<int> size(const std::map<std::string, util::TomlValue>& keys, const char* key) {
  if (!keys.count(key)) return std::nullopt;
  return static_cast<int>(number(keys, key));
}

// Every row's software checkpoints each layer when it recomputes
// (Megatron-LM's full recompute, DeepSpeed's and FSDP's activation
// checkpointing), where Strata's trainer checkpoints whole stages, and frees
// a hand-off's buffer once it is delivered, where the trainer keeps it for
// the step.
Framework frameworkOf(const std::map<std::string, util::TomlValue>& keys) {
  Framework framework;
  framework.layerRecompute = true;
  framework.holdsSendsUntilTaken = false;
  if (text(keys, "zero3_gathering") == "by-tensor")
    framework.zero3Gathering = Framework::Zero3Gathering::kByTensor;
  if (keys.count("split_hand_offs"))
    framework.splitHandOffs = std::get<bool>(keys.at("split_hand_offs"));
  if (keys.count("blocking_hand_offs"))
    framework.blockingHandOffs = std::get<bool>(keys.at("blocking_hand_offs"));
  return framework;
}

PublishedRun runOf(const std::string& id, const RunTables& tables) {
  const auto& k = tables.keys;
  PublishedRun run;
  run.id = id;
  run.source = text(k, "source");
  run.software = text(k, "software");
  run.flops = text(k, "flops");
  run.knownGap = text(k, "known_gap");
  run.measured = number(k, "measured");
  ModelOverrides sizes;
  sizes.layers = size(k, "layers");
  sizes.hidden = size(k, "hidden");
  if (sizes.hidden) sizes.ffn = 4 * *sizes.hidden;
  sizes.heads = size(k, "heads");
  sizes.vocab = size(k, "vocab");
  sizes.seqLen = size(k, "seq_len");
  run.job.model = overrideSizes(modelPreset(text(k, "model")), sizes);
  run.job.cluster = parseClusterText(util::tomlTable("", tables.cluster), id);
  run.job.globalBatch = static_cast<int>(number(k, "global_batch"));
  run.job.framework = frameworkOf(k);
  run.layout = parseLayout(text(k, "layout"));
  return run;
}

std::vector<PublishedRun> publishedRuns() {
  std::vector<PublishedRun> runs;
  for (const auto& [id, tables] : tablesOf(STRATA_SOURCE_DIR "/tests/plan/published_runs.toml"))
    runs.push_back(runOf(id, tables));
  return runs;
}

// The prediction in the row's own terms, and its error as a throughput:
// predicted / measured - 1 for TFLOP/s, measured / predicted - 1 for an
// iteration's seconds (a positive error: the planner is too fast).
struct RunOutcome {
  double predicted = 0, error = 0;
  Estimate estimate;
};

RunOutcome predict(const PublishedRun& run) {
  RunOutcome o;
  o.estimate = evaluateLayout(run.job, run.layout);
  if (run.flops == "time") {
    o.predicted = o.estimate.iterationSeconds;
    o.error = run.measured / o.predicted - 1;
  } else {
    o.predicted = o.estimate.hardwareFlopsPerDevice / 1e12;
    o.error = o.predicted / run.measured - 1;
  }
  return o;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void printDistribution(const std::vector<double>& errors) {
  std::vector<double> sizes;
  int within10 = 0, within15 = 0;
  for (double e : errors) {
    sizes.push_back(std::abs(e));
    within10 += std::abs(e) <= 0.10;
    within15 += std::abs(e) <= 0.15;
  }
  std::printf(
      "%zu rows: |error| median %.1f%%, max %.1f%%; %d within 10%% (%.0f%%), %d within 15%%\n",
      errors.size(), 100 * median(sizes), 100 * *std::max_element(sizes.begin(), sizes.end()),
      within10, 100.0 * within10 / errors.size(), within15);
}

TEST(PublishedRuns, EveryRowWithinFifteenPercentOrItsNamedGap) {
  std::vector<PublishedRun> runs = publishedRuns();
  ASSERT_GE(runs.size(), 26u);
  std::printf("%-28s %-46s %-8s %9s %9s %7s %5s\n", "run", "layout", "measure", "published",
              "predicted", "error", "fits");
  std::vector<double> errors;
  for (const PublishedRun& run : runs) {
    RunOutcome o = predict(run);
    const char* unit = run.flops == "time" ? "s/iter" : "TFLOP/s";
    std::printf("%-28s %-46s %-8s %9.1f %9.1f %+6.1f%% %5s%s\n", run.id.c_str(),
                toString(run.layout).c_str(), unit, run.measured, o.predicted, 100 * o.error,
                o.estimate.fitsMemory ? "yes" : "no", run.knownGap.empty() ? "" : "  (known gap)");
    errors.push_back(o.error);
    EXPECT_LT(std::abs(o.error), run.knownGap.empty() ? 0.15 : 0.45) << run.id;
    if (run.knownGap.empty()) {
      EXPECT_TRUE(o.estimate.fitsMemory) << run.id;
    }
  }
  printDistribution(errors);
}

// SC21 Table 2: ZeRO-3 without model parallelism (DeepSpeed's) ran slower
// than PTD-P on the same GPUs at every size, from 6% slower at 384 to a
// third of its TFLOP/s at 1536. `strata plan` searching those jobs must not
// choose ZeRO-3 without model parallelism, and must predict it slower than
// the published PTD-P layout: under the row's own framework (gathering by
// tensor) at every size, and from 768 GPUs on also under the trainer's
// (one gather a layer, the default), which prefetches a whole layer.
Layout bestLayout(const TrainingJob& job) {
  SearchOptions options;
  options.top = 1;
  options.microBatchSizes = {1};
  options.maxContextParallel = 1;
  options.recompute = {true};
  options.schedules = {"1f1b"};
  return searchLayouts(job, options).best.front().layout;
}

bool zeroThreeAlone(const Layout& l) { return l.zeroStage == 3 && l.pp == 1 && l.tp == 1; }

TEST(PublishedRuns, PlanRecommendsAgainstZeroThreeWhereItLost) {
  std::map<std::string, PublishedRun> byId;
  for (PublishedRun& run : publishedRuns()) byId[run.id] = run;
  for (const char* size :
       {"174.6b-384", "174.6b-768", "174.6b-1536", "529.6b-1120", "529.6b-2240"}) {
    SCOPED_TRACE(size);
    const PublishedRun& zero3 = byId.at(std::string("sc21-t2-zero3-") + size);
    const PublishedRun& ptdp = byId.at(std::string("sc21-t2-ptdp-") + size);
    ASSERT_GT(ptdp.measured, zero3.measured);
    TrainingJob rowJob = zero3.job;
    EXPECT_LT(evaluateLayout(rowJob, zero3.layout).samplesPerSecond,
              evaluateLayout(rowJob, ptdp.layout).samplesPerSecond);
    TrainingJob trainerJob = zero3.job;
    trainerJob.framework = Framework{};
    if (std::string(size) == "174.6b-384") {
      Layout best = bestLayout(rowJob);
      EXPECT_FALSE(zeroThreeAlone(best)) << toString(best);
      continue;
    }
    EXPECT_LT(evaluateLayout(trainerJob, zero3.layout).samplesPerSecond,
              evaluateLayout(trainerJob, ptdp.layout).samplesPerSecond);
    Layout best = bestLayout(trainerJob);
    EXPECT_FALSE(zeroThreeAlone(best)) << toString(best);
  }
}

}  // namespace
}  // namespace strata::plan

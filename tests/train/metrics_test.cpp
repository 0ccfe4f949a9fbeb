#include "strata/report/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "strata/report/flops.h"
#include "strata/report/loss_curve.h"
#include "strata/report/memory.h"
#include "strata/report/peak_flops.h"
#include "strata/report/progress.h"
#include "strata/util/log.h"
#include "strata/util/progress_text.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

StepMetrics sample() {
  StepMetrics m;
  m.step = 120;
  m.loss = 2.3141;
  m.lr = 8.1e-4;
  m.gradNorm = 0.82;
  m.tokensPerSecond = 12345;
  m.mfu = 0.31;
  m.peakMemoryBytes = 1 << 20;
  m.bubble = 0.25;
  return m;
}

TEST(Metrics, JsonLineHasEveryFieldInOrderAndNullForUnmeasured) {
  nlohmann::ordered_json line = nlohmann::ordered_json::parse(toJsonLine(sample()));
  std::vector<std::string> keys;
  for (const auto& field : line.items()) keys.push_back(field.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"step", "loss", "val_loss", "lr", "grad_norm",
                                            "tokens_per_s", "mfu", "peak_memory_bytes",
                                            "peak_cuda_memory_bytes", "bubble", "skipped_steps",
                                            "compute_median_s", "stragglers"}));
  EXPECT_TRUE(line["compute_median_s"].is_null());
  EXPECT_TRUE(line["stragglers"].empty());
  EXPECT_EQ(line["step"], 120);
  EXPECT_TRUE(line["val_loss"].is_null());
  EXPECT_TRUE(line["peak_cuda_memory_bytes"].is_null());
  // Read back exactly, not just closely.
  EXPECT_EQ(line["loss"].get<double>(), 2.3141);
  EXPECT_EQ(line["lr"].get<double>(), 8.1e-4);
  EXPECT_EQ(line["mfu"].get<double>(), 0.31);
  EXPECT_EQ(line["peak_memory_bytes"].get<double>(), 1 << 20);
}

// A mixture-of-experts run adds its routing figures; a dense run's lines
// have none of those keys.
TEST(Metrics, ExpertRoutingFiguresOnlyForMixtureOfExpertsRuns) {
  StepMetrics m = sample();
  m.moeTokensMin = 10;
  m.moeTokensMean = 16;
  m.moeTokensMax = 23;
  m.moeDropped = 4;
  m.moeAuxLoss = 1.02;
  m.moeZLoss = 0.5;
  m.moeExchangeSeconds = 0.25;
  nlohmann::ordered_json line = nlohmann::ordered_json::parse(toJsonLine(m));
  EXPECT_EQ(line["moe_tokens_min"], 10);
  EXPECT_EQ(line["moe_tokens_mean"], 16);
  EXPECT_EQ(line["moe_tokens_max"], 23);
  EXPECT_EQ(line["moe_dropped"], 4);
  EXPECT_EQ(line["moe_aux_loss"].get<double>(), 1.02);
  EXPECT_EQ(line["moe_z_loss"].get<double>(), 0.5);
  EXPECT_EQ(line["moe_exchange_s"].get<double>(), 0.25);
  EXPECT_FALSE(nlohmann::ordered_json::parse(toJsonLine(sample())).contains("moe_tokens_mean"));
}

TEST(Metrics, NonFiniteValuesAreNullAndTheLineStillParses) {
  StepMetrics m = sample();
  m.loss = std::nan("");
  m.gradNorm = std::numeric_limits<double>::infinity();
  m.tokensPerSecond = -std::numeric_limits<double>::infinity();
  const std::string text = toJsonLine(m);
  nlohmann::json line = nlohmann::json::parse(text);
  EXPECT_TRUE(line["loss"].is_null()) << text;
  EXPECT_TRUE(line["grad_norm"].is_null()) << text;
  EXPECT_TRUE(line["tokens_per_s"].is_null()) << text;
  EXPECT_EQ(line["bubble"].get<double>(), 0.25);
}

// A run logs steps 1-4 and crashes with half a line written; resumed from
// the checkpoint of step 2, it keeps steps 1-2 and logs 3-5 once each.
TEST(Metrics, ResumedWriterDropsTheStepsItRepeats) {
  fs::path path = fs::temp_directory_path() / ("strata_metrics_" + std::to_string(getpid()));
  StepMetrics m = sample();
  {
    MetricsWriter writer(path.string());
    for (m.step = 1; m.step <= 4; ++m.step) writer.write(m);
  }
  std::ofstream(path, std::ios::app) << "{\"step\":5,\"lo";
  {
    MetricsWriter resumed(path.string(), /*resumedAt=*/2);
    for (m.step = 3; m.step <= 5; ++m.step) resumed.write(m);
  }
  std::ifstream in(path);
  std::vector<int64_t> steps;
  for (std::string line; std::getline(in, line);)
    steps.push_back(nlohmann::json::parse(line)["step"].get<int64_t>());
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  { MetricsWriter fresh(path.string()); }
  EXPECT_EQ(fs::file_size(path), 0u) << "a fresh run starts an empty file";
  fs::remove(path);
}

TEST(Progress, FormatsDurationsAndEstimates) {
  EXPECT_EQ(util::formatDuration(45), "45s");
  EXPECT_EQ(util::formatDuration(187), "3m07s");
  EXPECT_EQ(util::formatDuration(7500), "2h05m");
  EXPECT_EQ(util::formatDuration(-1), "?");
  EXPECT_DOUBLE_EQ(util::estimateRemainingSeconds(30, 100, 300), 60);
  EXPECT_LT(util::estimateRemainingSeconds(30, 0, 300), 0);
}

TEST(Progress, PlainLinesOffATerminal) {
  std::ostringstream out;
  ProgressReporter progress(out, /*terminal=*/false, 300);
  progress.report(sample(), 30.0);
  progress.finish();
  EXPECT_EQ(
      out.str(),
      "step 120/300  loss 2.3141  lr 8.10e-04  grad 0.820  12.3k tok/s  mfu 31.0%  mem 1 MiB  "
      "bubble 25%  ETA 45s\n");
}

TEST(Progress, BarRedrawsInPlaceOnATerminal) {
  std::ostringstream out;
  ProgressReporter progress(out, /*terminal=*/true, 300, /*firstStep=*/100);
  progress.report(sample(), 10.0);  // 20 steps in 10 s, 180 to go
  progress.finish();
  EXPECT_EQ(out.str(),
            "\r[########............]  120/300  loss 2.314  lr 8.1e-04  12.3k tok/s  ETA 1m30s"
            "\033[K\n");
}

TEST(LossCurve, NiceTicksAreRound) {
  EXPECT_EQ(niceTicks(0, 300, 7), (std::vector<double>{0, 50, 100, 150, 200, 250, 300}));
  EXPECT_EQ(niceTicks(1.3, 5.6, 6), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(LossCurve, SvgHasAxesLabelsLegendAndBothSeries) {
  LossCurve curve;
  for (int step = 0; step <= 300; step += 10)
    curve.train.push_back({step, 5.5 * std::exp(-step / 100.0) + 1});
  curve.validation = {{100, 3.2}, {200, 1.9}, {300, 1.5}};
  std::string svg = renderLossCurveSvg(curve);
  EXPECT_EQ(svg.rfind("<svg xmlns='http://www.w3.org/2000/svg'", 0), 0u);
  EXPECT_NE(svg.find(">step</text>"), std::string::npos);
  EXPECT_NE(svg.find(">loss (nats per token)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">train</text>"), std::string::npos);
  EXPECT_NE(svg.find(">validation</text>"), std::string::npos);
  EXPECT_NE(svg.find(">300</text>"), std::string::npos);  // last x tick
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
  std::regex polyline("<polyline");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(svg.begin(), svg.end(), polyline), std::sregex_iterator()),
      2);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(LossCurve, EmptyCurveStillRenders) {
  std::string svg = renderLossCurveSvg(LossCurve{});
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
}

TEST(Flops, GptFormulaMatchesAHandCount) {
  GptShape shape{2, 64, 256, 256, 32};
  // N = 2 (4 * 64^2 + 2 * 64 * 256) + 64 * 256 = 2 (16384 + 32768) + 16384
  EXPECT_EQ(gptMatmulParameters(shape), 114688);
  // 6 N + 12 * 2 * 64 * 32
  EXPECT_DOUBLE_EQ(gptTrainingFlopsPerToken(shape), 6.0 * 114688 + 49152);
  EXPECT_DOUBLE_EQ(modelFlopsUtilization(1e6, 1e4, 1e11, 4), 0.025);
}

TEST(Memory, ParsesProcStatus) {
  EXPECT_EQ(statusBytes("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t 1024 kB\n", "VmHWM"), 2048 * 1024);
  EXPECT_EQ(statusBytes("VmRSS:\t 1024 kB\n", "VmHWM"), -1);
  EXPECT_EQ(statusBytes("VmHWM:\t lots\n", "VmHWM"), -1);
}

TEST(Memory, HighWaterMarkSeesATouchedAllocation) {
  int64_t before = peakResidentBytes();
  ASSERT_GT(before, 0);
  constexpr size_t kBytes = 128u << 20;
  std::vector<char> block(kBytes, 1);  // value-initialised: every page touched
  int64_t after = peakResidentBytes();
  EXPECT_GE(after, static_cast<int64_t>(kBytes)) << "block of " << kBytes << " bytes, " << block[7];
}

TEST(PeakFlops, MeasuresOnceThenReadsTheCache) {
  fs::path cache =
      fs::temp_directory_path() / ("strata_peak_" + std::to_string(getpid())) / "peak-flops.toml";
  int measured = 0;
  auto fake = [&] { return ++measured * 1e11; };
  PeakFlopsOptions options;
  options.cachePath = cache.string();
  EXPECT_DOUBLE_EQ(cachedPeakFlops(options, fake), 1e11);
  EXPECT_DOUBLE_EQ(cachedPeakFlops(options, fake), 1e11);  // cached
  EXPECT_EQ(measured, 1);
  options.threads = 2;  // another key
  EXPECT_DOUBLE_EQ(cachedPeakFlops(options, fake), 2e11);
  options.threads = 1;
  EXPECT_DOUBLE_EQ(cachedPeakFlops(options, fake), 1e11);
  EXPECT_EQ(measured, 2);
  std::ofstream(cache, std::ios::trunc) << "[broken\n";  // corrupt cache: measured afresh
  EXPECT_DOUBLE_EQ(cachedPeakFlops(options, fake), 3e11);
  EXPECT_DOUBLE_EQ(cachedPeakFlops(options, fake), 3e11);
  fs::remove_all(cache.parent_path());
}

// An embedding program captures the library's warnings with its own sink,
// and gets stderr back when it restores the sink it replaced.
TEST(PeakFlops, UnwritableCacheWarnsThroughTheLogSink) {
  fs::path file = fs::temp_directory_path() / ("strata_not_a_dir_" + std::to_string(getpid()));
  std::ofstream(file) << "a file, so no directory can be made under it\n";
  PeakFlopsOptions options;
  options.cachePath = (file / "peak-flops.toml").string();
  auto fake = [] { return 1e11; };
  std::vector<std::pair<LogLevel, std::string>> captured;
  LogSink previous = setLogSink(
      [&](LogLevel level, const std::string& message) { captured.emplace_back(level, message); });
  EXPECT_DOUBLE_EQ(cachedPeakFlops(options, fake), 1e11);
  setLogSink(previous);
  ASSERT_EQ(captured.size(), 1u);
  EXPECT_EQ(captured[0].first, LogLevel::Warning);
  EXPECT_EQ(captured[0].second.rfind("cannot cache the peak FLOP/s in '" + options.cachePath, 0),
            0u)
      << captured[0].second;

  std::ostringstream stderrText;
  std::streambuf* realStderr = std::cerr.rdbuf(stderrText.rdbuf());
  cachedPeakFlops(options, fake);
  std::cerr.rdbuf(realStderr);
  EXPECT_EQ(captured.size(), 1u);
  EXPECT_EQ(stderrText.str().rfind("strata: warning: cannot cache the peak FLOP/s in '", 0), 0u)
      << stderrText.str();
  fs::remove(file);
}

TEST(PeakFlops, MeasuresAPositiveRateAndNamesTheCpu) {
  EXPECT_GT(measureMatmulFlops(64, 2, 1), 0);
  EXPECT_NE(cpuModelName(), "");
}

}  // namespace
}  // namespace strata::train

// The run report's data and page, without a browser: what the page's script
// is given (reportDataJson), that the page carries it where the script reads
// it, and the metrics history a resumed run starts from. The page as a
// browser draws it is tested end to end in tests/trainer/report_browser_test.cpp.
#include "strata/report/run_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "formats/atomic_file.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr char kDataOpen[] = "<script type=\"application/json\" id=\"report-data\">";

StepMetrics stepWithLoss(int64_t step, double loss) {
  StepMetrics m;
  m.step = step;
  m.loss = loss;
  m.lr = 1e-3;
  return m;
}

RunReportData sampleReport() {
  RunReportData data;
  data.title = "GPT of 1000 parameters, runs/test";
  data.schedule = "1f1b";
  data.stepsPlanned = 10;
  data.history = {stepWithLoss(1, 5.5), stepWithLoss(2, 5.25), stepWithLoss(3, 5.0)};
  data.history[1].validationLoss = 5.4;
  data.layout = ParallelLayout(8, {2, 2, 1, 2});
  data.stages = {{0, 0, 0, 3}, {1, 1, 3, 3}};
  data.configToml = "[model]\nlayers = 4\n";
  return data;
}

// The JSON object inside the page's data element, as the page's script reads it.
json dataInPage(const std::string& page) {
  size_t begin = page.find(kDataOpen);
  EXPECT_NE(begin, std::string::npos) << "no data element";
  begin += sizeof(kDataOpen) - 1;
  size_t end = page.find("</script>", begin);
  return json::parse(page.substr(begin, end - begin));
}

fs::path freshReportDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(RunReport, MetricsGoInColumnsWithNullForUnmeasured) {
  json data = json::parse(reportDataJson(sampleReport()));
  const json& metrics = data["metrics"];
  EXPECT_EQ(metrics["step"], json({1, 2, 3}));
  EXPECT_EQ(metrics["loss"], json({5.5, 5.25, 5.0}));
  EXPECT_EQ(metrics["val_loss"], json({nullptr, 5.4, nullptr}));
  EXPECT_EQ(metrics["mfu"], json({nullptr, nullptr, nullptr}));
  EXPECT_EQ(data["status"]["steps"], 10);
  EXPECT_FALSE(data["status"]["finished"].get<bool>());
  EXPECT_TRUE(data["timelines"].is_null()) << "no step traced yet";
}

TEST(RunReport, NonFiniteValuesBecomeNull) {
  RunReportData report = sampleReport();
  report.history[0].loss = std::nan("");
  report.history[1].gradNorm = kInfinity;
  report.history[2].tokensPerSecond = -kInfinity;
  report.finalValidationLoss = std::nan("");
  json data = json::parse(reportDataJson(report));
  EXPECT_TRUE(data["metrics"]["loss"][0].is_null());
  EXPECT_TRUE(data["metrics"]["grad_norm"][1].is_null());
  EXPECT_TRUE(data["metrics"]["tokens_per_s"][2].is_null());
  EXPECT_TRUE(data["status"]["final_val_loss"].is_null());
  EXPECT_EQ(data["metrics"]["loss"][1], 5.25);
}

TEST(RunReport, LayoutMapPlacesEveryRank) {
  json layout = json::parse(reportDataJson(sampleReport()))["layout"];
  EXPECT_EQ(layout["describe"], "pp 2 x dp 2 x tp 2");
  ASSERT_EQ(layout["ranks"].size(), 8u);
  // rank 5 = tp 1 + 2 * (dp 0 + 2 * pp 1), as layout.h works it out.
  EXPECT_EQ(layout["ranks"][5], json({{"rank", 5}, {"pp", 1}, {"dp", 0}, {"cp", 0}, {"tp", 1}}));
  EXPECT_EQ(layout["stages"][1],
            json({{"stage", 1}, {"pp_rank", 1}, {"first_layer", 3}, {"layers", 3}}));
}

TEST(RunReport, PageCarriesTheDataWhereItsScriptReadsIt) {
  RunReportData report = sampleReport();
  report.measuredTimelineSvg = "<svg><rect class=\"action\"/></svg>";
  report.simulatedTimelineSvg = "<svg></svg>";
  std::string page = renderRunReport(report);
  EXPECT_EQ(page.find("STRATA_REPORT_DATA"), std::string::npos) << "marker left in the page";
  json data = dataInPage(page);
  EXPECT_EQ(data["title"], report.title);
  EXPECT_EQ(data["timelines"]["measured"], report.measuredTimelineSvg);
  EXPECT_EQ(data["config"], report.configToml);
}

TEST(RunReport, NoStringCanCloseTheDataElement) {
  RunReportData report = sampleReport();
  report.configToml = "out_dir = \"</script><script>alert(1)</script><!--\"";
  std::string json = reportDataJson(report);
  EXPECT_EQ(json.find('<'), std::string::npos) << json;
  EXPECT_EQ(dataInPage(renderRunReport(report))["config"], report.configToml);
}

TEST(RunReport, WritesThePageWithoutLeavingATemporaryFile) {
  fs::path dir = freshReportDir("strata_run_report");
  std::string path = (dir / "report.html").string();
  writeRunReport(path, sampleReport());
  writeRunReport(path, sampleReport());
  EXPECT_EQ(dataInPage(formats::readWholeFile(path))["metrics"]["step"].size(), 3u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(RunReport, ResumedHistoryStopsAtTheResumeStepAndSkipsBrokenLines) {
  fs::path dir = freshReportDir("strata_run_report_history");
  std::string path = (dir / "metrics.jsonl").string();
  {
    MetricsWriter writer(path);
    for (int64_t step = 1; step <= 4; ++step) writer.write(stepWithLoss(step, 6.0 - step));
  }
  std::ofstream(path, std::ios::app) << "{\"step\":5,\"loss\":1.";  // a crash mid-line
  std::vector<StepMetrics> history = readMetricsHistory(path, 3);
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[2].step, 3);
  EXPECT_EQ(history[2].loss, 3.0);
  EXPECT_EQ(history[2].lr, 1e-3);
  EXPECT_TRUE(std::isnan(history[2].validationLoss)) << "null reads back as not measured";
  EXPECT_EQ(readMetricsHistory(path, 100).size(), 4u);
  EXPECT_TRUE(readMetricsHistory((dir / "missing.jsonl").string(), 3).empty());
  fs::remove_all(dir);
}

// A straggler survives metrics.jsonl and reaches the page's data as a row.
TEST(RunReport, StragglersAndEveryRanksComputeGoThroughTheMetricsFile) {
  fs::path dir = freshReportDir("strata_run_report_stragglers");
  std::string path = (dir / "metrics.jsonl").string();
  {
    MetricsWriter writer(path);
    writer.write(stepWithLoss(1, 5.0));
    StepMetrics compared = stepWithLoss(2, 4.5);
    compared.computeMedianSeconds = 0.125;
    compared.stragglers = {{3, "node-b", 0.5}};
    compared.rankComputeSeconds = {0.125, 0.12, 0.13, 0.5};
    writer.write(compared);
    writer.write(stepWithLoss(3, 4.4));
  }
  RunReportData data = sampleReport();
  data.history = readMetricsHistory(path, 3);
  ASSERT_EQ(data.history.size(), 3u);
  ASSERT_EQ(data.history[1].stragglers.size(), 1u);
  EXPECT_EQ(data.history[1].stragglers[0].host, "node-b");
  json rows = json::parse(reportDataJson(data)).at("stragglers");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(
      rows[0],
      (json{
          {"step", 2}, {"rank", 3}, {"host", "node-b"}, {"compute_s", 0.5}, {"median_s", 0.125}}));
  // Every rank's compute at the last comparison, for the layout map.
  EXPECT_EQ(json::parse(reportDataJson(data)).at("rank_compute"),
            (json{{"step", 2}, {"seconds", {0.125, 0.12, 0.13, 0.5}}}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace strata::train

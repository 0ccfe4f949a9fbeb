// Stragglers named: one rank of a pp 2 x dp 2 run made slow on purpose
// (STRATA_DEBUG_SLOW_RANK: 0.1 s in each of its layers' forwards, far above
// what the tiny model's layers take) is named at every comparison, in the
// log, metrics.jsonl and the report, and no other rank is. Its pipeline
// peers wait for it, but waits are not compute, so they are not named.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/train/train_loop.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

std::string reportText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Stragglers, TheSlowedRankAndOnlyItIsNamed) {
  std::string dir = sharedDir("stragglers");
  TrainConfig config = tinyConfig();
  config.parallel.pp = 2;
  config.parallel.dp = 2;
  config.train.steps = 4;
  config.train.evalEvery = 0;
  config.train.stragglerEvery = 2;
  // Several times the factor apart, so the noise of four processes on two
  // loaded cores cannot name another rank.
  config.train.stragglerFactor = 5;
  config.train.outDir = dir + "/run";
  strata::testing::MultiProcessOptions options = sharedDirOptions(dir);
  options.env["STRATA_DEBUG_SLOW_RANK"] = "3:0.1";
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        std::ostringstream log;
        Trainer trainer(config, World::init());
        runTraining(trainer, log);
        if (ctx.rank == 0) std::ofstream(config.train.outDir + "/log.txt") << log.str();
      },
      options);
  std::string log = reportText(config.train.outDir + "/log.txt");
  for (int step : {2, 4}) {
    std::string line = "strata train: straggler at step " + std::to_string(step) + ": rank 3 (";
    EXPECT_NE(log.find(line), std::string::npos) << line << " not in:\n" << log;
  }
  EXPECT_EQ(log.find("straggler at step 1:"), std::string::npos) << log;
  for (int rank : {0, 1, 2})
    EXPECT_EQ(log.find(": rank " + std::to_string(rank) + " ("), std::string::npos) << log;
  std::ifstream metrics(config.train.outDir + "/metrics.jsonl");
  int compared = 0;
  for (std::string text; std::getline(metrics, text);) {
    nlohmann::json line = nlohmann::json::parse(text);
    const nlohmann::json& stragglers = line.at("stragglers");
    if (line.at("step").get<int>() % 2 != 0) {
      EXPECT_TRUE(stragglers.empty()) << text;
      EXPECT_TRUE(line.at("compute_median_s").is_null()) << text;
      continue;
    }
    ++compared;
    ASSERT_EQ(stragglers.size(), 1u) << text;
    EXPECT_EQ(stragglers[0].at("rank"), 3) << text;
    EXPECT_FALSE(stragglers[0].at("host").get<std::string>().empty()) << text;
    EXPECT_GT(stragglers[0].at("compute_s").get<double>(),
              5 * line.at("compute_median_s").get<double>())
        << text;
  }
  EXPECT_EQ(compared, 2);
  std::string report = reportText(config.train.outDir + "/report.html");
  EXPECT_NE(report.find(R"("stragglers":[{"compute_s":)"), std::string::npos);
  EXPECT_NE(report.find(R"("rank":3,"step":2})"), std::string::npos);
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

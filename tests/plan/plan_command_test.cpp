#include "plan_command.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

namespace strata {
namespace {

struct Outcome {
  int code;
  std::string out, err;
};

// `strata plan ARGS`, run as the binary runs it.
Outcome plan(std::vector<std::string> args) {
  std::ostringstream out, err;
  CLI::App strata("", "strata");
  Subcommand command = addPlanCommand(strata, out, err);
  args.insert(args.begin(), "plan");
  int code = runCommandLine(strata, {command}, args, out, err);
  return {code, out.str(), err.str()};
}

const std::vector<std::string> kMegatron = {"--model",        "megatron-145.6b",
                                            "--cluster",      "dgx-a100-80gb-ib200",
                                            "--nodes",        "192",
                                            "--global-batch", "2304",
                                            "--tokens",       "300e9"};

std::vector<std::string> with(std::vector<std::string> args, std::vector<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(PlanCommand, FixedLayoutPrintsThroughputAndExplains) {
  Outcome r = plan(with(kMegatron, {"--layout", "pp8,tp8,mb1,recompute", "--explain"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("pp8,tp8,dp24,mb1,v1,1f1b,zero0,recompute"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pipeline bubble"), std::string::npos);
  EXPECT_NE(r.out.find("memory per device"), std::string::npos);
}

TEST(PlanCommand, JsonIsOneObjectPerLayout) {
  Outcome r = plan({"--model", "gpt2-medium", "--cluster", "dgx-a100-80gb-ib200", "--nodes", "2",
                    "--global-batch", "64", "--top", "3", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    nlohmann::json layout = nlohmann::json::parse(line);
    EXPECT_EQ(layout.at("rank"), ++count);
    EXPECT_GT(layout.at("samples_per_s").get<double>(), 0) << line;
    EXPECT_TRUE(layout.at("layout").is_string()) << line;
  }
  EXPECT_EQ(count, 3);
}

TEST(PlanCommand, SearchOutputIsDeterministic) {
  std::vector<std::string> args = {"--model",        "gpt2-medium", "--cluster", "dgx-h100-80gb",
                                   "--global-batch", "32",          "--top",     "4"};
  EXPECT_EQ(plan(args).out, plan(args).out);
}

TEST(PlanCommand, InvalidInputExitsTwoWithTheReason) {
  Outcome unknown = plan({"--model", "gpt9"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("known presets: "), std::string::npos) << unknown.err;
  Outcome cluster = plan({"--cluster", "tpu-pod"});
  EXPECT_EQ(cluster.code, 2);
  EXPECT_NE(cluster.err.find("dgx-h100-80gb"), std::string::npos) << cluster.err;
  Outcome small = plan({"--model", "gpt3-175b", "--cluster", "p4d.24xlarge", "--nodes", "1"});
  EXPECT_EQ(small.code, 2);
  EXPECT_NE(small.err.find("cluster too small"), std::string::npos) << small.err;
  Outcome layout = plan(with(kMegatron, {"--layout", "pp8,tp8,dp7"}));
  EXPECT_EQ(layout.code, 2);
  EXPECT_NE(layout.err.find("= 448 devices, but the cluster has 192 nodes"), std::string::npos)
      << layout.err;
  Outcome flag = plan({"--nodes", "x"});
  EXPECT_EQ(flag.code, 2);
  EXPECT_NE(flag.err.find("--nodes expects an integer"), std::string::npos) << flag.err;
  Outcome file = plan({"--cluster-file", "/nonexistent/c.txt"});
  EXPECT_EQ(file.code, 2);
  EXPECT_NE(file.err.find("cannot read cluster file"), std::string::npos);
}

TEST(PlanCommand, HelpListsTheFlags) {
  Outcome r = plan({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--global-batch"), std::string::npos);
  EXPECT_NE(r.out.find("--layout"), std::string::npos);
}

}  // namespace
}  // namespace strata

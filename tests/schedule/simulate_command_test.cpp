#include "simulate_command.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace strata {
namespace {

struct CommandOutput {
  int status = 0;
  std::string out, err;
};

// `strata simulate ARGS`, run as the binary runs it.
CommandOutput runSimulate(std::vector<std::string> args) {
  CLI::App strata("", "strata");
  Subcommand command = addSimulateCommand(strata);
  args.insert(args.begin(), "simulate");
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  CommandOutput result;
  result.status = runCommandLine(strata, {command}, args, std::cout, std::cerr);
  result.out = testing::internal::GetCapturedStdout();
  result.err = testing::internal::GetCapturedStderr();
  return result;
}

std::string readFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string tempPath(const std::string& name) {
  return testing::TempDir() + "strata_simulate_" + name;
}

TEST(SimulateCommand, PrintsGridAndSummary) {
  const CommandOutput result =
      runSimulate({"--schedule", "1f1b", "--ranks", "4", "--microbatches", "8"});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("1f1b: 4 ranks, 4 stages, 8 microbatches"), std::string::npos);
  EXPECT_NE(result.out.find("rank 3 |"), std::string::npos);
  EXPECT_NE(result.out.find("makespan 33"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("mean bubble 27.27%, worst 27.27%, peak stash 4"), std::string::npos)
      << result.out;
}

TEST(SimulateCommand, RunsTheVSchedules) {
  const CommandOutput zbv =
      runSimulate({"--schedule", "zb-v", "--ranks", "4", "--microbatches", "8"});
  ASSERT_EQ(zbv.status, 0) << zbv.err;
  EXPECT_NE(zbv.out.find("zb-v: 4 ranks, 8 stages, 8 microbatches"), std::string::npos);
  // Each chunk costs half its rank's share: idle (p - 1) / 2 against 1F1B's 9.
  EXPECT_NE(zbv.out.find("makespan 25.5"), std::string::npos) << zbv.out;
  EXPECT_NE(zbv.out.find("mean bubble 5.88%, worst 5.88%, peak stash 8"), std::string::npos)
      << zbv.out;
  const CommandOutput dual =
      runSimulate({"--schedule", "dualpipe-v", "--ranks", "4", "--microbatches", "10"});
  ASSERT_EQ(dual.status, 0) << dual.err;
  EXPECT_NE(dual.out.find("0F7+7B3"), std::string::npos) << dual.out;
  EXPECT_NE(dual.out.find("makespan 33"), std::string::npos) << dual.out;
  EXPECT_NE(dual.out.find("mean bubble 9.09%, worst 9.09%, peak stash 9"), std::string::npos)
      << dual.out;
  const CommandOutput few =
      runSimulate({"--schedule", "dualpipe-v", "--ranks", "4", "--microbatches", "6"});
  EXPECT_EQ(few.status, 1);
  EXPECT_NE(few.err.find("6 microbatches on 4 ranks"), std::string::npos) << few.err;
}

TEST(SimulateCommand, WritesSvgTraceAndTextThatReadsBack) {
  const std::string svg = tempPath("out.svg"), trace = tempPath("out.json"),
                    text = tempPath("sched.txt");
  const CommandOutput result =
      runSimulate({"--schedule=interleaved-1f1b", "--ranks=2", "--microbatches=4",
                   "--virtual-stages=2", "--svg", svg, "--trace", trace, "--text"});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(readFile(svg).find("<rect class=\"action\""), std::string::npos);
  // 2 thread names, then F and B of 4 microbatches on each of the 4 stages.
  EXPECT_EQ(nlohmann::json::parse(readFile(trace)).at("traceEvents").size(), 2u + 4 * 4 * 2);
  const std::size_t header = result.out.find("ranks 2 stages 4 microbatches 4");
  ASSERT_NE(header, std::string::npos) << result.out;
  std::ofstream(text) << result.out.substr(header);
  const CommandOutput reread = runSimulate({"--file", text});
  ASSERT_EQ(reread.status, 0) << reread.err;
  const std::string summary = reread.out.substr(reread.out.find("makespan"));
  EXPECT_NE(result.out.find(summary), std::string::npos) << result.out << "\n" << summary;
  std::remove(svg.c_str());
  std::remove(trace.c_str());
  std::remove(text.c_str());
}

TEST(SimulateCommand, BadFlagsExitWithTwo) {
  const CommandOutput unknown = runSimulate({"--bogus", "1"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("unknown flag '--bogus'"), std::string::npos) << unknown.err;
  EXPECT_EQ(runSimulate({"--ranks", "0"}).status, 2);
  EXPECT_EQ(runSimulate({"--file", "x.txt", "--ranks", "2"}).status, 2);
}

TEST(SimulateCommand, BadSchedulesExitWithOne) {
  const CommandOutput unknown = runSimulate({"--schedule", "dualpipe"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.err.find("known schedules: gpipe, 1f1b"), std::string::npos) << unknown.err;
  const CommandOutput uneven =
      runSimulate({"--schedule", "interleaved-1f1b", "--ranks", "4", "--microbatches", "6"});
  EXPECT_EQ(uneven.status, 1);
  EXPECT_NE(uneven.err.find("6 microbatches on 4 ranks"), std::string::npos) << uneven.err;
}

TEST(SimulateCommand, HelpListsFlags) {
  const CommandOutput help = runSimulate({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--virtual-stages"), std::string::npos);
}

}  // namespace
}  // namespace strata

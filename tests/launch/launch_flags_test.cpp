// `strata launch`'s flags in Strata's spelling and torchrun's, parsed as the
// binary parses them, without starting anything.
#include "strata/launch/launch_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "strata/error.h"
#include "strata/util/command_line.h"

namespace strata {
namespace {

// `strata launch ARGS`, with neither STRATA_TIMEOUT nor STRATA_JOB_TOKEN set.
LaunchOptions parseLaunch(std::vector<std::string> args) {
  unsetenv("STRATA_TIMEOUT");
  unsetenv("STRATA_JOB_TOKEN");
  CLI::App strata("", "strata");
  LaunchFlags flags(*strata.add_subcommand("launch"));
  args.insert(args.begin(), "launch");
  parseCommandLine(strata, args);
  return flags.options();
}

std::string errorOf(const std::vector<std::string>& args) {
  try {
    parseLaunch(args);
  } catch (const FlagError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LaunchFlags, TorchrunSpellingsSetTheSameOptions) {
  for (const char* separator : {"_", "-"}) {
    auto flag = [&](std::string words) {
      for (char& c : words) {
        if (c == ' ') c = *separator;
      }
      return "--" + words;
    };
    LaunchOptions o = parseLaunch({flag("nproc per node"), "4", "--nnodes", "2", flag("node rank"),
                                   "1", flag("master addr"), "10.0.0.1", flag("master port"),
                                   "29500", flag("max restarts"), "3", "--", "python", "x.py"});
    EXPECT_EQ(o.nprocPerNode, 4) << separator;
    EXPECT_EQ(o.nnodes, 2);
    EXPECT_EQ(o.nodeRank, 1);
    EXPECT_EQ(o.masterAddr, "10.0.0.1");
    EXPECT_EQ(o.masterPort, 29500);
    EXPECT_EQ(o.maxRestarts, 3);
    EXPECT_EQ(o.command, (std::vector<std::string>{"python", "x.py"}));
  }
}

TEST(LaunchFlags, RendezvousEndpointSetsMasterAddressAndPort) {
  for (const char* spelling : {"--rdzv-endpoint", "--rdzv_endpoint"}) {
    LaunchOptions o = parseLaunch({"--nnodes", "2", spelling, "node0.cluster:29400", "--", "w"});
    EXPECT_EQ(o.masterAddr, "node0.cluster") << spelling;
    EXPECT_EQ(o.masterPort, 29400) << spelling;
  }
  LaunchOptions v6 = parseLaunch({"--rdzv-endpoint=[fd00::1]:1234", "--", "w"});
  EXPECT_EQ(v6.masterAddr, "fd00::1");
  EXPECT_EQ(v6.masterPort, 1234);
}

TEST(LaunchFlags, AMalformedEndpointIsNamed) {
  for (const char* bad : {"node0", "node0:", ":29400", "node0:port", "node0:70000", "[]:80"}) {
    EXPECT_NE(errorOf({"--rdzv-endpoint", bad, "--", "w"})
                  .find("--rdzv-endpoint expects HOST:PORT with PORT in [0, 65535], got '" +
                        std::string(bad) + "'"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(errorOf({"--rdzv-endpoint", "a:1", "--master-port", "2", "--", "w"}).find("excludes"),
            std::string::npos);
}

// As torchrun takes its script: the first argument that is not a flag
// starts the worker command, and the worker's own flags stay its own.
TEST(LaunchFlags, TheWorkerCommandStartsAtTheFirstArgumentThatIsNotAFlag) {
  LaunchOptions o = parseLaunch({"--nproc_per_node", "2", "train.py", "--lr", "3", "--", "x"});
  EXPECT_EQ(o.nprocPerNode, 2);
  EXPECT_EQ(o.command, (std::vector<std::string>{"train.py", "--lr", "3", "--", "x"}));
  LaunchOptions dashed = parseLaunch({"--", "strata", "train", "--nproc-per-node", "9"});
  EXPECT_EQ(dashed.nprocPerNode, 1);
  EXPECT_EQ(dashed.command, (std::vector<std::string>{"strata", "train", "--nproc-per-node", "9"}));
}

TEST(LaunchFlags, BadFlagsAreNamed) {
  EXPECT_NE(errorOf({"--nproc_per_node", "two", "--", "w"})
                .find("--nproc-per-node expects an integer, got 'two'"),
            std::string::npos);
  EXPECT_NE(errorOf({"--master-port", "65536", "--", "w"})
                .find("--master-port must be at most 65535, got 65536"),
            std::string::npos);
  EXPECT_NE(errorOf({"--nproc-per-nodes", "2", "--", "w"}).find("unknown flag '--nproc-per-nodes'"),
            std::string::npos);
  EXPECT_NE(errorOf({"--nproc-per-node", "2"}).find("no worker command"), std::string::npos);
}

TEST(LaunchFlags, TheEnvironmentStandsInForFlagsNotGiven) {
  setenv("STRATA_JOB_TOKEN", "from-env", 1);
  setenv("STRATA_TIMEOUT", "42", 1);
  CLI::App strata("", "strata");
  LaunchFlags flags(*strata.add_subcommand("launch"));
  parseCommandLine(strata, {"launch", "--job-token", "from-flag", "--", "w"});
  LaunchOptions o = flags.options();
  EXPECT_EQ(o.jobToken, "from-flag");
  EXPECT_DOUBLE_EQ(o.timeoutSeconds, 42);
  unsetenv("STRATA_JOB_TOKEN");
  unsetenv("STRATA_TIMEOUT");
}

}  // namespace
}  // namespace strata

// The `strata` command itself: what it does with a subcommand it does not
// know, with bad flags and with an environment it cannot use, what its help
// lists, and what it says its version is.
#include <gtest/gtest.h>

#include "child_process.h"
#include "strata/version.h"

namespace strata {
namespace {

using testing::after;

// The binary only prints and exits; 30 s covers loading LibTorch on a loaded machine.
constexpr std::chrono::seconds kLimit{30};

TEST(Cli, UnknownSubcommandListsTheSubcommandsAndFails) {
  for (const char* unknown : {"frobnicate", "--frobnicate"}) {
    std::string output;
    std::optional<ExitStatus> status =
        testing::runToEnd({STRATA_BINARY, unknown}, after(kLimit), &output);
    ASSERT_TRUE(status) << output;
    EXPECT_EQ(status->code, 2) << output;
    EXPECT_NE(output.find("unknown command '" + std::string(unknown) + "'"), std::string::npos)
        << output;
    for (const char* command : {"launch", "train", "generate", "simulate", "plan"}) {
      EXPECT_NE(output.find("\n  " + std::string(command) + " "), std::string::npos)
          << command << " is not listed:\n"
          << output;
    }
  }
}

// STRATA_TIMEOUT is read by the launcher before any worker starts; a value
// that is no positive number is refused there, naming the variable and the text.
TEST(Cli, LaunchRefusesAMalformedStrataTimeoutNamingIt) {
  for (const char* bad : {"abc", "1.5x", "0"}) {
    SpawnSpec spec;
    spec.argv = {STRATA_BINARY, "launch", "--nproc-per-node", "1", "--", "true"};
    spec.setEnv = {{"STRATA_TIMEOUT", bad}};
    testing::ChildProcess launcher(spec);
    std::optional<ExitStatus> status = launcher.waitForExit(after(kLimit));
    ASSERT_TRUE(status) << launcher.output();
    EXPECT_EQ(status->code, 2) << launcher.output();
    EXPECT_NE(launcher.output().find("strata launch: STRATA_TIMEOUT must be a positive number of "
                                     "seconds, got '" +
                                     std::string(bad) + "'"),
              std::string::npos)
        << launcher.output();
  }
}

// STRATA_TEST_TORCH_VERSION is the version CMake's find_package(Torch) found,
// a source independent of the <torch/version.h> the binary prints from.
TEST(Cli, VersionNamesStrataAndTheLibTorchItWasBuiltWith) {
  for (const char* spelling : {"--version", "version"}) {
    std::string output;
    std::optional<ExitStatus> status =
        testing::runToEnd({STRATA_BINARY, spelling}, after(kLimit), &output);
    ASSERT_TRUE(status) << output;
    EXPECT_EQ(status->code, 0) << output;
    EXPECT_EQ(output,
              "strata " STRATA_VERSION "\nbuilt with LibTorch " STRATA_TEST_TORCH_VERSION "\n")
        << spelling;
  }
}

TEST(Cli, HelpListsTheCommandsAndVersion) {
  std::string output;
  std::optional<ExitStatus> status =
      testing::runToEnd({STRATA_BINARY, "--help"}, after(kLimit), &output);
  ASSERT_TRUE(status) << output;
  EXPECT_EQ(status->code, 0) << output;
  EXPECT_NE(output.find("\n  --version "), std::string::npos) << output;
  for (const char* command : {"train", "launch", "generate", "plan", "simulate", "version"}) {
    EXPECT_NE(output.find("\n  " + std::string(command) + " "), std::string::npos)
        << command << " is not listed:\n"
        << output;
  }
}

TEST(Cli, EachCommandsHelpListsItsFlags) {
  struct Case {
    const char* command;
    const char* flag;
  };
  for (const Case& c : std::vector<Case>{{"train", "--lr X"},
                                         {"launch", "--nproc-per-node,--nproc_per_node N"},
                                         {"generate", "--checkpoint S"},
                                         {"plan", "--global-batch N"},
                                         {"simulate", "--virtual-stages N"}}) {
    std::string output;
    std::optional<ExitStatus> status =
        testing::runToEnd({STRATA_BINARY, c.command, "--help"}, after(kLimit), &output);
    ASSERT_TRUE(status) << output;
    EXPECT_EQ(status->code, 0) << output;
    EXPECT_NE(output.find("Usage: strata " + std::string(c.command)), std::string::npos) << output;
    EXPECT_NE(output.find(c.flag), std::string::npos) << c.flag << " not in:\n" << output;
  }
}

TEST(Cli, BadFlagsExitTwoNamingTheFlagAndTheValue) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {{"train", "--lr", "fast"}, "strata train: --lr expects a number, got 'fast'"},
           {{"train", "--steps=1e3"}, "strata train: --steps expects an integer, got '1e3'"},
           {{"train", "--learning-rate", "1"}, "strata train: unknown flag '--learning-rate'"},
           {{"plan", "--top", "0"}, "strata plan: --top must be at least 1, got 0"},
           {{"version", "now"}, "strata version: unexpected argument 'now'"},
       }) {
    std::vector<std::string> argv = {STRATA_BINARY};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    std::string output;
    std::optional<ExitStatus> status = testing::runToEnd(argv, after(kLimit), &output);
    ASSERT_TRUE(status) << output;
    EXPECT_EQ(status->code, 2) << output;
    EXPECT_NE(output.find(c.message), std::string::npos) << c.message << " not in:\n" << output;
  }
}

}  // namespace
}  // namespace strata

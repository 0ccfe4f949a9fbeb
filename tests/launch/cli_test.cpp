// The `strata` command itself: what it does with a subcommand it does not know.
#include <gtest/gtest.h>

#include "child_process.h"

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

}  // namespace
}  // namespace strata

// One error hierarchy: whatever a Strata layer rejects, a caller catches it
// as strata::Error. Each check provokes a real error of one layer.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <string>
#include <type_traits>

#include "strata/error.h"
#include "strata/plan/cluster.h"
#include "strata/plan/errors.h"
#include "strata/schedule/error.h"
#include "strata/schedule/registry.h"
#include "strata/util/cli_flags.h"
#include "strata/util/command_line.h"

namespace strata {
namespace {

static_assert(std::is_base_of_v<Error, ConfigError>);
static_assert(std::is_base_of_v<Error, TimeoutError>);
static_assert(std::is_base_of_v<Error, PeerError>);
static_assert(std::is_base_of_v<Error, ProtocolError>);
static_assert(std::is_base_of_v<Error, SystemError>);
static_assert(std::is_base_of_v<ConfigError, FlagError>);
static_assert(std::is_base_of_v<ConfigError, plan::PlanError>);
static_assert(std::is_base_of_v<Error, schedule::ScheduleError>);
static_assert(std::is_base_of_v<schedule::ScheduleError, schedule::ValidationError>);

TEST(ErrorHierarchy, AnUnknownFlagIsCaughtAsStrataError) {
  int64_t steps = 1;
  CLI::App program("", "strata");
  addIntFlag(*program.add_subcommand("test"), "--steps", &steps, "steps");
  EXPECT_THROW(parseCommandLine(program, {"test", "--no-such-flag", "1"}), Error);
}

TEST(ErrorHierarchy, AnUnknownScheduleIsCaughtAsStrataError) {
  schedule::GeneratorOptions options;
  EXPECT_THROW(schedule::generate("no-such-schedule", options), Error);
}

TEST(ErrorHierarchy, ASystemErrorNamesTheCallAndErrno) {
  SystemError error("fork", EAGAIN);
  EXPECT_EQ(error.error(), EAGAIN);
  EXPECT_EQ(std::string(error.what()), std::string("fork: ") + std::strerror(EAGAIN));
}

TEST(ErrorHierarchy, AnUnknownClusterPresetIsCaughtAsStrataError) {
  EXPECT_THROW(plan::clusterPreset("no-such-cluster"), Error);
}

}  // namespace
}  // namespace strata

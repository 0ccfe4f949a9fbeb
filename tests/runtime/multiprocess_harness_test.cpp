// The multi-process harness itself: a rank that exits successfully without
// ever entering the test body (a filter that matched nothing, a body that
// went astray) must fail the test, not pass it silently.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "multiprocess.h"

namespace strata::testing {
namespace {

// Code before runInProcesses runs in every child too: rank 1 leaves here,
// with success, before reaching the body.
void rankOneExitsBeforeTheBody() {
  const char* rank = std::getenv("RANK");
  if (rank != nullptr && std::string(rank) == "1") _exit(0);
}

void bodyThatPasses(const RankContext&) {}

TEST(MultiProcessHarness, RecordsWhichRanksEnteredTheBody) {
  rankOneExitsBeforeTheBody();
  std::vector<RankResult> results = runInProcessesRaw(2, bodyThatPasses);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].exit.success());
  EXPECT_TRUE(results[1].exit.success());
  EXPECT_TRUE(results[0].ranBody);
  EXPECT_FALSE(results[1].ranBody);
}

void runWhereRankOneNeverEntersTheBody() {
  rankOneExitsBeforeTheBody();
  runInProcesses(2, bodyThatPasses);
}

TEST(MultiProcessHarness, ARankThatNeverRanTheBodyFailsTheTest) {
  EXPECT_NONFATAL_FAILURE(runWhereRankOneNeverEntersTheBody(),
                          "rank 1 of 2 exited without running the test body");
}

}  // namespace
}  // namespace strata::testing

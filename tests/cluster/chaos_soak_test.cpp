// The chaos soak (chaos_soak.h) with one fault of each kind: the elastic job
// survives them all, trains every step to an uninterrupted run's loss, leaves
// no process behind and ends with a checkpoint that verifies. Longer soaks:
// scripts/chaos-soak.sh.
#include "chaos_soak.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "rehearsal_cluster.h"

namespace strata::testing {
namespace {

TEST(ChaosSoak, AnElasticJobSurvivesOneFaultOfEachKind) {
  std::string why = RehearsalCluster::unavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  if (geteuid() != 0) GTEST_SKIP() << "filling a tmpfs disk needs root";
  SoakOptions options;
  options.strataBinary = STRATA_BINARY;
  options.faults = {{FaultKind::kKillWorker, 1},
                    {FaultKind::kKillNode, 2},
                    {FaultKind::kStopWorker, 0},
                    {FaultKind::kFillDisk, 0},
                    {FaultKind::kCutLink, 1}};
  SoakReport report = runChaosSoak(options);
  std::string context = report.summary() + report.log;
  EXPECT_TRUE(report.finished) << context;
  ASSERT_EQ(report.faults.size(), options.faults.size()) << context;
  for (const FaultOutcome& f : report.faults)
    EXPECT_GE(f.secondsLost, 0) << faultName(f.fault.kind) << " not recovered\n" << context;
  ASSERT_FALSE(report.uninterrupted.empty()) << context;
  EXPECT_EQ(report.losses.size(), report.uninterrupted.size())
      << "metrics.jsonl repeats or lacks steps\n"
      << context;
  EXPECT_LE(report.largestRelativeDifference, 1e-5) << context;
  EXPECT_TRUE(report.leftOver.empty()) << context;
  EXPECT_TRUE(report.checkpointVerified) << context;
}

}  // namespace
}  // namespace strata::testing

// The chaos soak (chaos_soak.h) with one fault of each kind, and under etcd
// with node 0 lost twice: the elastic job survives them all, trains every
// step to an uninterrupted run's loss, leaves no process behind and ends with
// a checkpoint that verifies. Longer soaks: scripts/chaos-soak.sh.
#include "chaos_soak.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "rehearsal_cluster.h"

namespace strata::testing {
namespace {

void expectSurvived(const SoakOptions& options) {
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
  expectSurvived(options);
}

// Under etcd no node serves the rendezvous: node 0's launcher is killed and
// later its link cut, and the job goes on each time on the other nodes.
TEST(ChaosSoak, UnderEtcdTheJobSurvivesTheLossOfNodeZero) {
  std::string why = RehearsalCluster::unavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  SoakOptions options;
  options.strataBinary = STRATA_BINARY;
  options.etcd = true;
  options.faults = {{FaultKind::kKillNode, 0}, {FaultKind::kCutLink, 0}};
  expectSurvived(options);
}

}  // namespace
}  // namespace strata::testing

// Failures in the time to train (strata/plan/failures.h): the checkpoint
// interval against Daly's closed form, the goodput against whole runs
// simulated, and the presets' figures against Llama 3's published ones.
#include "strata/plan/failures.h"

#include <gtest/gtest.h>

#include <cmath>

#include "strata/plan/cluster.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

// A job whose mean time between failures is `mtbfHours`.
FailureInputs jobWithMtbf(double mtbfHours, int devices = 1024) {
  FailureInputs in;
  in.devices = devices;
  in.failuresPerDeviceHour = 1 / (mtbfHours * devices);
  in.replicas = 8;
  in.stepSeconds = 10;
  in.saveSeconds = 30;
  in.restartSeconds = 300;
  in.detectionSeconds = 60;
  in.rejoinSeconds = 60;
  return in;
}

// Daly's higher-order estimate of the optimum (2006), written here apart
// from the planner's numerical minimum: for delta < 2M,
// sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta.
double dalyEstimate(double delta, double mtbf) {
  double x = delta / (2 * mtbf);
  return std::sqrt(2 * delta * mtbf) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
}

TEST(Failures, TheIntervalIsDalysOptimum) {
  for (double hours : {1.0, 3.0, 24.0}) {
    FailureInputs in = jobWithMtbf(hours);
    in.restartSeconds = 0;  // Daly's estimate leaves the restart out
    GoodputPlan plan = planGoodput(in);
    EXPECT_NEAR(plan.mtbfSeconds, hours * 3600, 1e-6 * hours * 3600);
    double daly = dalyEstimate(in.saveSeconds, plan.mtbfSeconds);
    EXPECT_NEAR(plan.checkpointIntervalSeconds, daly, 0.01 * daly) << hours << " h";
    // A minimum: a tenth either way loses more.
    double best = restartWallPerWork(in, plan.checkpointIntervalSeconds);
    EXPECT_LT(best, restartWallPerWork(in, 0.9 * plan.checkpointIntervalSeconds));
    EXPECT_LT(best, restartWallPerWork(in, 1.1 * plan.checkpointIntervalSeconds));
  }
}

TEST(Failures, WithoutFailuresNothingIsLost) {
  FailureInputs in = jobWithMtbf(1);
  in.failuresPerDeviceHour = 0;
  GoodputPlan plan = planGoodput(in);
  EXPECT_TRUE(std::isinf(plan.mtbfSeconds));
  EXPECT_DOUBLE_EQ(plan.restartGoodput, 1);
  EXPECT_DOUBLE_EQ(plan.inJobGoodput, 1);
  in.replicas = 1;
  EXPECT_DOUBLE_EQ(planGoodput(in).inJobGoodput, 0);  // no replica to train on
}

// Whole runs drawn at the rate land, on average, on the closed forms.
TEST(Failures, SimulatedRunsAverageTheClosedForms) {
  FailureInputs in = jobWithMtbf(2);
  GoodputPlan plan = planGoodput(in);
  const double work = 200 * 3600.0;
  SimulatedRuns restart = simulateFailures(in, work, plan.checkpointIntervalSeconds, false, 400, 7);
  double mean = 0;
  for (double wall : restart.wallSeconds) mean += wall / 400;
  EXPECT_NEAR(mean / work, 1 / plan.restartGoodput, 0.005);
  EXPECT_NEAR(restart.meanInterruptions(), mean / plan.mtbfSeconds, 0.02 * mean / plan.mtbfSeconds);
  EXPECT_LE(restart.percentileSeconds(0.1), restart.percentileSeconds(0.9));
  SimulatedRuns inJob = simulateFailures(in, work, plan.checkpointIntervalSeconds, true, 400, 7);
  mean = 0;
  for (double wall : inJob.wallSeconds) mean += wall / 400;
  EXPECT_NEAR(mean / work, 1 / plan.inJobGoodput, 0.002);
  EXPECT_GT(plan.inJobGoodput, plan.restartGoodput);
}

TEST(Failures, BadInputIsRefusedByName) {
  FailureInputs in = jobWithMtbf(1);
  in.restartSeconds = -1;
  try {
    planGoodput(in);
    ADD_FAILURE() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("the restart time must be >= 0"), std::string::npos);
  }
  in = jobWithMtbf(1);
  in.replicas = 1;
  try {
    simulateFailures(in, 3600, 600, true, 10, 1);
    ADD_FAILURE() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2 data-parallel replicas"), std::string::npos);
  }
}

// Llama 3 405B ("The Llama 3 Herd of Models", 2024): 466 interruptions in
// a 54-day snapshot on 16,384 H100s, 419 unexpected, and "higher than 90%
// effective training time". The H100 preset's rate is that figure; its
// checkpoint of 405.9B parameters (bf16 weights, 12 bytes of AdamW state
// each, 5.7 TB) over Tectonic's 2 TB/s stalls 2.8 s; with the preset's
// assumed 5-minute restart the plan keeps 95% (printed), above the
// published 90%, which any restart up to about 15 minutes would keep.
TEST(Failures, Llama3405BKeepsMoreThanNinetyPercent) {
  Cluster h100 = clusterPreset("dgx-h100-80gb");
  const Reliability& r = h100.reliability;
  FailureInputs in;
  in.devices = 16384;
  in.replicas = 128;
  in.failuresPerDeviceHour = r.failuresPerDeviceHour;
  in.saveSeconds = 405.9e9 * (2 + 12) / (r.storageBytesPerNode * 2048);
  in.restartSeconds = r.restartSeconds;
  in.stepSeconds = 10;
  GoodputPlan plan = planGoodput(in);
  EXPECT_NEAR(54 * 24 * 3600 / plan.mtbfSeconds, 419, 0.5);
  EXPECT_NEAR(in.saveSeconds, 2.84, 0.01);
  std::printf(
      "Llama 3 405B: MTBF %.2f h, save %.1f s every %.1f min, goodput %.1f%% "
      "(published: more than 90%%)\n",
      plan.mtbfSeconds / 3600, in.saveSeconds, plan.checkpointIntervalSeconds / 60,
      100 * plan.restartGoodput);
  EXPECT_GT(plan.restartGoodput, 0.90);
  in.restartSeconds = 15 * 60;
  EXPECT_GT(planGoodput(in).restartGoodput, 0.90);
  in.restartSeconds = 16 * 60;
  EXPECT_LT(planGoodput(in).restartGoodput, 0.90);
}

}  // namespace
}  // namespace strata::plan

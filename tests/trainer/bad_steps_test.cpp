// Training that survives bad steps: a nan gradient on one rank makes every
// rank skip the same optimizer step, with parameters unchanged, and training
// goes on; non-finite steps in a row beyond train.max_skipped_steps roll the
// run back to its latest checkpoint and on past the data that caused them.
//
// The nan is injected by a gradient hook on one parameter of one rank, the
// way a numerical blow-up in one layer would surface.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "strata/report/run_report.h"
#include "strata/train/train_loop.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Turns the gradient of this rank's first parameter into nan while `poison`
// says so; the hook sees each micro-batch's gradient.
void poisonGradients(Trainer& trainer, const std::function<bool()>& poison) {
  at::Tensor parameter = trainer.parameterShards().front().tensor;
  parameter.register_hook(
      [poison](const at::Tensor& grad) { return poison() ? grad * kNan : grad; });
}

std::vector<at::Tensor> copies(const Trainer& trainer) {
  std::vector<at::Tensor> out;
  for (const ParameterShard& shard : trainer.parameterShards()) out.push_back(shard.tensor.clone());
  return out;
}

bool unchanged(const std::vector<at::Tensor>& before, const Trainer& trainer) {
  std::vector<ParameterShard> now = trainer.parameterShards();
  for (size_t i = 0; i < now.size(); ++i) {
    if (!torch::equal(before[i], now[i].tensor)) return false;
  }
  return true;
}

// pp 2 x dp 2; the last rank (pp 1, dp 1) poisons step 2. What each rank
// records: skipped flags of steps 1-3, whether step 2 left its parameters
// unchanged and step 3 changed them, and whether step 3's loss is finite.
TEST(BadSteps, ANanOnOneRankSkipsTheSameStepEverywhere) {
  TrainConfig config = tinyConfig();
  config.parallel.pp = 2;
  config.parallel.dp = 2;
  std::string dir = sharedDir("badsteps");
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        Trainer trainer(config, World::init());
        int64_t* stepInProgress = new int64_t(0);  // lives as long as the hook
        if (ctx.rank == 3) poisonGradients(trainer, [=] { return *stepInProgress == 2; });
        std::vector<double> record;
        std::vector<at::Tensor> before;
        for (int step = 1; step <= 3; ++step) {
          *stepInProgress = step;
          if (step == 2) before = copies(trainer);
          StepReport report = trainer.step();
          record.push_back(report.skipped ? 1 : 0);
          if (step == 2) record.push_back(unchanged(before, trainer) ? 1 : 0);
          if (step == 3) record.push_back(unchanged(before, trainer) ? 0 : 1);
          if (step == 3) record.push_back(std::isfinite(report.loss) ? 1 : 0);
        }
        writeValues(dir, "record", ctx.rank, record);
      },
      sharedDirOptions(dir));
  for (int rank = 0; rank < 4; ++rank) {
    // skipped 1, skipped 2, unchanged by 2, skipped 3, changed by 3, finite 3
    EXPECT_EQ(readValues(dir, "record", rank), (std::vector<double>{0, 1, 1, 0, 1, 1}))
        << "rank " << rank;
  }
  removeSharedDir(dir);
}

// After a rollback metrics.jsonl holds steps 1 to `steps` once each, in
// order: the steps run again replace the rolled-back ones.
void expectEachStepOnce(const std::string& metricsPath, int64_t steps) {
  std::vector<int64_t> logged, expected;
  for (const StepMetrics& m : readMetricsHistory(metricsPath, steps)) logged.push_back(m.step);
  for (int64_t step = 1; step <= steps; ++step) expected.push_back(step);
  EXPECT_EQ(logged, expected);
}

// One process, 4 micro-batches a step: steps 3 and 4 are poisoned, two in a
// row reach max_skipped_steps 2, the run rolls back to the checkpoint of
// step 2 and trains its 6 steps on the data after the poisoned batches.
TEST(BadSteps, NonFiniteStepsInARowRollBackToTheLatestCheckpoint) {
  TrainConfig config = tinyConfig();
  config.train.steps = 6;
  config.train.maxSkippedSteps = 2;
  config.train.logEvery = 1;
  config.train.evalEvery = 0;
  std::string dir = sharedDir("rollback");
  config.checkpoint.dir = dir + "/checkpoints";
  config.checkpoint.every = 2;
  config.train.outDir = dir + "/run";
  Trainer trainer(config, singleProcessWorld());
  int64_t gradients = 0;  // micro-batch gradients seen so far
  int64_t perStep = config.train.globalBatch / config.train.microBatch;
  poisonGradients(trainer, [&] {
    int64_t step = gradients++ / perStep + 1;  // counts every step run, rolled back or not
    return step == 3 || step == 4;
  });
  std::ostringstream log;
  TrainSummary summary = runTraining(trainer, log);
  EXPECT_EQ(summary.skippedSteps, 2) << log.str();
  EXPECT_EQ(summary.rollBacks, 1) << log.str();
  EXPECT_EQ(summary.steps, 6);
  EXPECT_TRUE(std::isfinite(summary.lossEnd)) << log.str();
  EXPECT_NE(log.str().find("step 4 skipped: loss 5."), std::string::npos) << log.str();
  EXPECT_NE(log.str().find(", gradient norm nan; parameters unchanged (2 in a row)"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("rolled back to the checkpoint of step 2 after 2 non-finite steps"),
            std::string::npos)
      << log.str();
  expectEachStepOnce(config.train.outDir + "/metrics.jsonl", 6);
  removeSharedDir(dir);
}

// A loss spike rolls the run back once. The parameters are scaled up in the
// middle of step 62's backward (as a blow-up would), so step 63's loss
// spikes; the run goes back to the checkpoint of step 60 and trains on past
// the data of steps 61-63 to a loss like the one before. 60 steps before the
// spike fill the detector's window of 50.
TEST(BadSteps, ALossSpikeRollsBackToTheLatestCheckpoint) {
  TrainConfig config = tinyConfig();
  config.train.steps = 70;
  config.train.warmupSteps = 5;
  config.train.evalEvery = 0;
  config.train.spikeRollback = true;
  config.train.logEvery = 1;
  std::string dir = sharedDir("spike");
  config.checkpoint.dir = dir + "/checkpoints";
  config.checkpoint.every = 10;
  config.train.outDir = dir + "/run";
  Trainer trainer(config, singleProcessWorld());
  int64_t gradients = 0;
  int64_t perStep = config.train.globalBatch / config.train.microBatch;
  at::Tensor parameter;  // the token embedding, tied to the head: its scale is the logits'
  for (const ParameterShard& shard : trainer.parameterShards())
    if (shard.name.find("tokens") != std::string::npos) parameter = shard.tensor;
  ASSERT_TRUE(parameter.defined());
  parameter.register_hook([&, parameter](const at::Tensor& grad) {
    if (gradients++ == 62 * perStep - 1) parameter.detach().mul_(100);  // counts every step run
    return grad;
  });
  std::ostringstream log;
  TrainSummary summary = runTraining(trainer, log);
  EXPECT_EQ(summary.rollBacks, 1) << log.str();
  EXPECT_EQ(summary.steps, 70);
  EXPECT_NE(log.str().find("loss spike at step 63"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("rolled back to the checkpoint of step 60 after the loss spike at "
                           "step 63; training goes on past the data that caused it"),
            std::string::npos)
      << log.str();
  EXPECT_LT(summary.lossEnd, 4.0) << log.str();
  expectEachStepOnce(config.train.outDir + "/metrics.jsonl", 70);
  removeSharedDir(dir);
}

// With nothing to roll back to, the run stops naming why.
TEST(BadSteps, RollingBackWithoutACheckpointIsAClearError) {
  TrainConfig config = tinyConfig();
  config.train.steps = 4;
  config.train.maxSkippedSteps = 1;
  config.train.evalEvery = 0;
  std::string dir = sharedDir("norollback");
  config.train.outDir = dir + "/run";
  Trainer trainer(config, singleProcessWorld());
  poisonGradients(trainer, [] { return true; });
  std::ostringstream log;
  try {
    runTraining(trainer, log);
    ADD_FAILURE() << "a run of nothing but nan steps finished";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no checkpoint to roll back to"), std::string::npos)
        << e.what();
  }
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

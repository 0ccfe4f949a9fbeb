// An elastic training job end to end: three one-worker nodes of
// `strata launch --nnodes 2:3` train with `--elastic-policy dp`; node 2 is
// killed mid-run. The two nodes left re-form the job, the trainer fits dp 2
// to the world of two, keeps the global batch with more micro-batches, and
// resumes from the last complete checkpoint. Its losses, step by step, are
// those of an uninterrupted dp 3 run within 1e-5 relative (the reduction
// order changes with dp), from the first step to the last.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "child_process.h"
#include "metrics_file.h"
#include "multiprocess.h"

namespace strata {
namespace {

using testing::after;
using testing::ChildProcess;
using testing::lossesInMetrics;

constexpr int kSteps = 60;
constexpr int kCheckpointEvery = 5;
// The job is killed once rank 0 has logged this step: after a checkpoint.
constexpr int kKillAfterStep = 12;
// Three launchers, a failure, a re-formed job of two and 60 steps of a tiny
// GPT on a loaded 2-core machine: far above the usual 5 s.
constexpr std::chrono::seconds kElasticJobLimit{120};

std::vector<std::string> trainCommand(const std::string& dir) {
  return {STRATA_BINARY,    "train",  "--layers",       "2",
          "--hidden",       "64",     "--heads",        "2",
          "--ffn",          "128",    "--context",      "32",
          "--seq-len",      "32",     "--global-batch", "12",
          "--micro-batch",  "2",      "--steps",        std::to_string(kSteps),
          "--log-every",    "1",      "--eval-every",   "0",
          "--corpus-bytes", "100000", "--warmup-steps", "2",
          "--dp",           "3",      "--out-dir",      dir + "/out",
          "--timeout",      "30"};
}

std::unique_ptr<ChildProcess> startLauncher(std::vector<std::string> launchFlags,
                                            const std::vector<std::string>& worker) {
  SpawnSpec spec;
  spec.argv = {STRATA_BINARY, "launch"};
  spec.argv.insert(spec.argv.end(), launchFlags.begin(), launchFlags.end());
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), worker.begin(), worker.end());
  return std::make_unique<ChildProcess>(spec);
}

std::string freshDir(const std::string& name) {
  std::string dir = std::filesystem::temp_directory_path() /
                    ("strata-elastic-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

std::vector<double> uninterruptedLosses() {
  std::string dir = freshDir("uninterrupted");
  auto job = startLauncher({"--nproc-per-node", "3", "--timeout", "30"}, trainCommand(dir));
  std::optional<ExitStatus> status = job->waitForExit(after(kElasticJobLimit));
  EXPECT_TRUE(status && status->success()) << job->output();
  std::vector<double> losses = lossesInMetrics(dir + "/out/metrics.jsonl");
  std::filesystem::remove_all(dir);
  return losses;
}

TEST(ElasticTraining, JobLosingANodeResumesOnTheRestAndContinuesTheUninterruptedRun) {
  std::vector<double> expected = uninterruptedLosses();
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));

  std::string dir = freshDir("elastic");
  std::vector<std::string> worker = trainCommand(dir);
  worker.insert(worker.end(),
                {"--elastic-policy", "dp", "--resume", "--checkpoint-dir", dir + "/checkpoints",
                 "--checkpoint-every", std::to_string(kCheckpointEvery)});
  testing::ReservedPort reserved;
  std::vector<std::unique_ptr<ChildProcess>> nodes;
  for (int node = 0; node < 3; ++node) {
    nodes.push_back(startLauncher(
        {"--nproc-per-node", "1", "--nnodes", "2:3", "--node-rank", std::to_string(node),
         "--master-addr", "127.0.0.1", "--master-port", std::to_string(reserved.number()),
         "--max-restarts", "1", "--join-wait", "2", "--timeout", "30"},
        worker));
  }
  std::string killPoint = "step " + std::to_string(kKillAfterStep) + "/";
  ASSERT_TRUE(nodes[0]->waitForOutput(
      [&](const std::string& out) { return out.find(killPoint) != std::string::npos; },
      after(kElasticJobLimit)))
      << nodes[0]->output();
  kill(nodes[2]->pid(), SIGKILL);

  for (int node = 0; node < 2; ++node) {
    std::optional<ExitStatus> status = nodes[node]->waitForExit(after(kElasticJobLimit));
    ASSERT_TRUE(status && status->success()) << nodes[node]->output();
  }
  const std::string& out = nodes[0]->output();
  EXPECT_NE(out.find("of 2 (elastic 2:3) (workers per node 1,1, world size 2)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("running pp 1 x dp 2 x tp 1 (policy dp), the global batch of 12 kept as 3 "
                     "micro-batches of 2 per replica"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("resumed at step "), std::string::npos) << out;

  std::vector<double> losses = lossesInMetrics(dir + "/out/metrics.jsonl");
  ASSERT_EQ(losses.size(), expected.size()) << "metrics.jsonl repeats or lacks steps";
  for (size_t step = 0; step < losses.size(); ++step) {
    EXPECT_NEAR(losses[step], expected[step], 1e-5 * std::abs(expected[step]))
        << "step " << step + 1;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata

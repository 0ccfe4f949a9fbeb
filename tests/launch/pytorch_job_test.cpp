// A plain PyTorch script, written for torchrun, runs under `strata launch`
// unchanged: init_process_group("gloo") from the environment connects to the
// launcher's store (TORCHELASTIC_USE_AGENT_STORE) instead of trying to serve
// one on the port the launcher already serves, on one node, across two
// launchers, and again after a restart (in a fresh store, as torch 2.x's
// Python expects). The project's .venv torch (STRATA_TEST_PYTHON), which
// scripts/python-env.sh installs for the tests.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "child_process.h"
#include "multiprocess.h"
#include "strata/util/subprocess.h"

namespace strata {
namespace {

using testing::after;
using testing::ChildProcess;

// Python importing torch in every worker, on a loaded machine.
constexpr std::chrono::seconds kPyTorchJobLimit{120};

bool containsText(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class LaunchPyTorch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string probe =
        std::string(STRATA_TEST_PYTHON) + " -c 'import torch.distributed' 2>/dev/null";
    ASSERT_EQ(std::system(probe.c_str()), 0)
        << STRATA_TEST_PYTHON << " has no torch (scripts/python-env.sh installs it)";
  }
};

std::unique_ptr<ChildProcess> launchScript(const std::vector<std::string>& flags,
                                           std::map<std::string, std::string> env = {}) {
  SpawnSpec spec;
  spec.argv = {STRATA_BINARY, "launch", "--timeout", "60"};
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  spec.argv.insert(spec.argv.end(), {"--", STRATA_TEST_PYTHON, PYTORCH_JOB_SCRIPT});
  spec.setEnv = std::move(env);
  return std::make_unique<ChildProcess>(spec);
}

ExitStatus finish(ChildProcess& launcher) {
  std::optional<ExitStatus> status = launcher.waitForExit(after(kPyTorchJobLimit));
  if (!status)
    ADD_FAILURE() << "strata launch still ran after " << kPyTorchJobLimit.count() << " s";
  return status.value_or(ExitStatus{});
}

TEST_F(LaunchPyTorch, InitProcessGroupFromTheEnvironmentRunsUnchanged) {
  auto launcher = launchScript({"--nproc-per-node", "2", "--rdzv-id", "pyjob"});
  ExitStatus status = finish(*launcher);
  const std::string& out = launcher->output();
  EXPECT_TRUE(status.success()) << out;
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    EXPECT_TRUE(containsText(out, "[rank " + r + "] pytorch rank " + r +
                                      " of 2 sum 3 run pyjob role "
                                      "rank " +
                                      r + " group rank 0 attempt 0"))
        << out;
  }
}

// Rank 1 fails in the first attempt; the restart meets in the next round's
// store, which holds none of the first attempt's keys.
TEST_F(LaunchPyTorch, ARestartedJobMeetsAgain) {
  auto launcher =
      launchScript({"--nproc-per-node", "2", "--max-restarts", "1"}, {{"FAIL_RANK", "1"}});
  ExitStatus status = finish(*launcher);
  const std::string& out = launcher->output();
  EXPECT_TRUE(status.success()) << out;
  EXPECT_TRUE(containsText(out, "rank 1 (local rank 1) failed with exit code 5")) << out;
  EXPECT_TRUE(containsText(out,
                           "[rank 0] pytorch rank 0 of 2 sum 3 run none role rank 0 group rank 0 "
                           "attempt 1"))
      << out;
}

TEST_F(LaunchPyTorch, TwoLaunchersFormOnePyTorchJob) {
  testing::ReservedPort reserved;
  std::vector<std::string> common = {"--nnodes",      "2",
                                     "--master-addr", "127.0.0.1",
                                     "--master-port", std::to_string(reserved.number())};
  std::vector<std::string> node0 = common, node1 = common;
  node0.insert(node0.end(), {"--node-rank", "0", "--nproc-per-node", "2"});
  node1.insert(node1.end(), {"--node-rank", "1", "--nproc-per-node", "1"});
  auto first = launchScript(node0);
  auto second = launchScript(node1);
  for (ChildProcess* node : {first.get(), second.get()})
    EXPECT_TRUE(finish(*node).success()) << node->output();
  EXPECT_TRUE(containsText(first->output(), "[rank 1] pytorch rank 1 of 3 sum 6"))
      << first->output();
  EXPECT_TRUE(containsText(second->output(),
                           "[rank 2] pytorch rank 2 of 3 sum 6 run none role rank 2 "
                           "group rank 1"))
      << second->output();
}

}  // namespace
}  // namespace strata

// Jobs started without `strata launch`, as Slurm's srun and Open MPI's mpirun
// start them: each of 4 processes gets only the scheduler's own variables
// (set here by hand, as those launchers would), finds its place in the job
// from them (src/runtime/scheduler_env.h), and the pp 2 x tp 2 job trains
// what the independent reference trains.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "child_process.h"
#include "multiprocess.h"
#include "reference_comparison.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

using strata::testing::after;
using strata::testing::ChildProcess;

constexpr int kRanks = 4;
// Four workers of the tiny GPT starting on a loaded 2-core machine.
constexpr std::chrono::seconds kJobLimit{240};

TrainConfig pp2tp2() {
  TrainConfig config = tinyConfig();
  config.parallel.pp = 2;
  config.parallel.tp = 2;
  config.parallel.schedule = "1f1b";
  return config;
}

// Runs the 4 ranks, each with the variables `variablesOf` gives it, and
// compares their training with the reference.
void expectJobEqualsReference(
    const std::string& name,
    const std::function<std::map<std::string, std::string>(int)>& variablesOf) {
  TrainConfig config = pp2tp2();
  std::string dir = sharedDir(name);
  std::vector<std::unique_ptr<ChildProcess>> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    SpawnSpec spec;
    spec.argv = {
        NODE_TRAINER, "record", dir, "4", "2", "1", "2", "1f1b", std::to_string(config.train.seed)};
    spec.setEnv = variablesOf(rank);
    spec.setEnv["STRATA_TIMEOUT"] = "60";
    ranks.push_back(std::make_unique<ChildProcess>(spec));
  }
  strata::testing::Deadline deadline = after(kJobLimit);
  for (int rank = 0; rank < kRanks; ++rank) {
    std::optional<ExitStatus> status = ranks[rank]->waitForExit(deadline);
    ASSERT_TRUE(status && status->success()) << "rank " << rank << ":\n" << ranks[rank]->output();
  }
  expectRunMatchesReference(dir, kRanks, config);
  removeSharedDir(dir);
}

TEST(SchedulerEnvironment, SlurmTasksFormAPp2Tp2JobEqualToTheReference) {
  strata::testing::ReservedPort port;
  expectJobEqualsReference("slurm", [&](int rank) {
    return std::map<std::string, std::string>{{"SLURM_PROCID", std::to_string(rank)},
                                              {"SLURM_NTASKS", std::to_string(kRanks)},
                                              {"SLURM_LOCALID", std::to_string(rank)},
                                              {"SLURM_NODEID", "0"},
                                              {"SLURM_TASKS_PER_NODE", std::to_string(kRanks)},
                                              {"SLURM_JOB_NODELIST", "localhost"},
                                              {"SLURM_JOB_ID", "4242"},
                                              {"MASTER_PORT", std::to_string(port.number())}};
  });
}

TEST(SchedulerEnvironment, OpenMpiRanksFormAPp2Tp2JobEqualToTheReference) {
  strata::testing::ReservedPort port;
  expectJobEqualsReference("ompi", [&](int rank) {
    return std::map<std::string, std::string>{
        {"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
        {"OMPI_COMM_WORLD_SIZE", std::to_string(kRanks)},
        {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(kRanks)},
        {"MASTER_PORT", std::to_string(port.number())}};
  });
}

// The real thing where Debian's Open MPI is installed (scripts/setup.sh
// installs it): `mpirun -np 4` starts the ranks and sets their variables.
TEST(SchedulerEnvironment, UnderOpenMpisMpirunAPp2Tp2JobEqualsTheReference) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs Open MPI's mpirun (apt-get install openmpi-bin)";
  TrainConfig config = pp2tp2();
  std::string dir = sharedDir("mpirun");
  strata::testing::ReservedPort port;
  SpawnSpec spec;
  // --allow-run-as-root: CI runs as root; --oversubscribe: 4 ranks on 2 cores.
  spec.argv = {"mpirun",
               "--allow-run-as-root",
               "--oversubscribe",
               "-np",
               std::to_string(kRanks),
               "-x",
               "MASTER_PORT=" + std::to_string(port.number()),
               "-x",
               "STRATA_TIMEOUT=60",
               NODE_TRAINER,
               "record",
               dir,
               "4",
               "2",
               "1",
               "2",
               "1f1b",
               std::to_string(config.train.seed)};
  ChildProcess mpirun(spec);
  std::optional<ExitStatus> status = mpirun.waitForExit(after(kJobLimit));
  ASSERT_TRUE(status && status->success()) << mpirun.output();
  expectRunMatchesReference(dir, kRanks, config);
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

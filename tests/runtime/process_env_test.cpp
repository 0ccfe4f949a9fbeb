#include "strata/runtime/process_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "scheduler_env.h"
#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {
namespace {

ProcessEnv parse(const std::map<std::string, std::string>& vars) {
  return ProcessEnv::fromLookup([&](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

std::string errorOf(const std::map<std::string, std::string>& vars) {
  try {
    parse(vars);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ProcessEnv, NothingSetIsAJobOfOne) {
  ProcessEnv env = parse({});
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.worldSize, 1);
  EXPECT_EQ(env.localWorldSize, 1);
  EXPECT_TRUE(env.jobToken.empty());
}

TEST(ProcessEnv, ReadsTorchrunVariables) {
  ProcessEnv env = parse({{"RANK", "5"},
                          {"WORLD_SIZE", "8"},
                          {"LOCAL_RANK", "1"},
                          {"LOCAL_WORLD_SIZE", "4"},
                          {"MASTER_ADDR", "10.0.0.1"},
                          {"MASTER_PORT", "29600"},
                          {"TORCHELASTIC_RESTART_COUNT", "2"},
                          {"STRATA_JOB_TOKEN", "secret"}});
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.worldSize, 8);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.localWorldSize, 4);
  EXPECT_EQ(env.masterAddr, "10.0.0.1");
  EXPECT_EQ(env.masterPort, 29600);
  EXPECT_EQ(env.restartAttempt, 2);
  EXPECT_EQ(env.jobToken, "secret");
}

TEST(ProcessEnv, BadValuesNameTheVariable) {
  EXPECT_EQ(errorOf({{"RANK", "4"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "x"}}),
            "RANK 4 is outside [0, WORLD_SIZE 4)");
  EXPECT_NE(errorOf({{"RANK", "-1"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "x"}})
                .find("RANK -1 is outside"),
            std::string::npos);
  EXPECT_NE(errorOf({{"WORLD_SIZE", "2"}}).find("MASTER_ADDR is not set"), std::string::npos);
  EXPECT_NE(errorOf({{"WORLD_SIZE", "two"}}).find("WORLD_SIZE must be an integer"),
            std::string::npos);
  EXPECT_NE(errorOf({{"WORLD_SIZE", "0"}}).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(errorOf({{"MASTER_PORT", "70000"}}).find("MASTER_PORT"), std::string::npos);
  EXPECT_NE(errorOf({{"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "2"}}).find("LOCAL_RANK 3"),
            std::string::npos);
  // Out of range and trailing text are errors, not a clamped or partial value.
  EXPECT_NE(
      errorOf({{"WORLD_SIZE", "99999999999999999999"}})
          .find("WORLD_SIZE must be an integer in [1, 1073741824], got '99999999999999999999'"),
      std::string::npos);
  EXPECT_NE(errorOf({{"MASTER_PORT", "29500x"}}).find("MASTER_PORT must be an integer"),
            std::string::npos);
}

TEST(Timeouts, FromSecondsValidates) {
  EXPECT_EQ(Timeouts::fromSeconds(1.5).collective.count(), 1500);
  EXPECT_THROW(Timeouts::fromSeconds(0), ConfigError);
  EXPECT_THROW(Timeouts::fromSeconds(-3), ConfigError);
}

TEST(Timeouts, EnvironmentValueMustBeAPositiveNumber) {
  ::setenv("STRATA_TIMEOUT", "2.5", 1);
  EXPECT_EQ(Timeouts::secondsFromEnvironment(), 2.5);
  EXPECT_EQ(Timeouts::fromEnvironment().collective.count(), 2500);
  for (const char* bad : {"abc", "1.5x", "0", "-1", "inf"}) {
    ::setenv("STRATA_TIMEOUT", bad, 1);
    try {
      Timeouts::secondsFromEnvironment();
      ADD_FAILURE() << "accepted STRATA_TIMEOUT=" << bad;
    } catch (const ConfigError& e) {
      EXPECT_EQ(
          std::string(e.what()),
          "STRATA_TIMEOUT must be a positive number of seconds, got '" + std::string(bad) + "'");
    }
  }
  ::unsetenv("STRATA_TIMEOUT");
  EXPECT_EQ(Timeouts::secondsFromEnvironment(), std::nullopt);
}

TEST(ProcessEnv, NodeSizesComeFromTheLauncherOrEqualNodes) {
  std::map<std::string, std::string> rank3of5 = {{"RANK", "3"},
                                                 {"WORLD_SIZE", "5"},
                                                 {"LOCAL_RANK", "0"},
                                                 {"LOCAL_WORLD_SIZE", "2"},
                                                 {"MASTER_ADDR", "n0"}};
  EXPECT_TRUE(parse(rank3of5).nodeSizes.empty());  // 2 does not divide 5: unknown
  rank3of5["STRATA_NODE_SIZES"] = "3,2";
  EXPECT_EQ(parse(rank3of5).nodeSizes, (std::vector<int>{3, 2}));
  EXPECT_EQ(
      parse({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}})
          .nodeSizes,
      (std::vector<int>{2, 2}));
  rank3of5["STRATA_NODE_SIZES"] = "2,3";
  EXPECT_EQ(errorOf(rank3of5),
            "STRATA_NODE_SIZES '2,3' does not fit WORLD_SIZE 5 and LOCAL_WORLD_SIZE 2 of RANK 3");
  rank3of5["STRATA_NODE_SIZES"] = "3,x";
  EXPECT_EQ(errorOf(rank3of5),
            "STRATA_NODE_SIZES must list each node's worker count, like '3,2', got '3,x'");
}

TEST(ProcessEnv, FlightFolderAndTheSlowRankHook) {
  std::map<std::string, std::string> vars = {{"RANK", "1"},
                                             {"WORLD_SIZE", "4"},
                                             {"MASTER_ADDR", "a"},
                                             {"STRATA_FLIGHT_DIR", "/tmp/f/attempt-0"},
                                             {"STRATA_DEBUG_SLOW_RANK", "3:0.25"}};
  ProcessEnv env = parse(vars);
  EXPECT_EQ(env.flightDir, "/tmp/f/attempt-0");
  EXPECT_EQ(env.debugSlowRank, 3);
  EXPECT_DOUBLE_EQ(env.debugSlowSeconds, 0.25);
  EXPECT_EQ(parse({}).debugSlowRank, -1);
  for (const char* bad : {"4:1", "3", "x:1", "3:", "3:-1", "3:61", "3:1s"}) {
    vars["STRATA_DEBUG_SLOW_RANK"] = bad;
    EXPECT_EQ(errorOf(vars),
              "STRATA_DEBUG_SLOW_RANK expects RANK:SECONDS with RANK in [0, "
              "WORLD_SIZE 4) and SECONDS in [0, 60], got '" +
                  std::string(bad) + "'");
  }
}

// What `srun` sets for task 5 of 7 on the second of three nodes.
TEST(ProcessEnv, SlurmVariablesPlaceTheTask) {
  ProcessEnv env = parse({{"SLURM_PROCID", "5"},
                          {"SLURM_NTASKS", "7"},
                          {"SLURM_LOCALID", "2"},
                          {"SLURM_NODEID", "1"},
                          {"SLURM_TASKS_PER_NODE", "3(x2),1"},
                          {"SLURM_JOB_NODELIST", "gpu[07-08],cpu1"},
                          {"SLURM_JOB_ID", "123456"}});
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.worldSize, 7);
  EXPECT_EQ(env.localRank, 2);
  EXPECT_EQ(env.localWorldSize, 3);
  EXPECT_EQ(env.nodeSizes, (std::vector<int>{3, 3, 1}));
  EXPECT_EQ(env.masterAddr, "gpu07");
  EXPECT_EQ(env.masterPort, 20000 + 123456 % 40000);
}

TEST(ProcessEnv, ALauncherInsideSlurmWins) {
  ProcessEnv env = parse({{"RANK", "1"},
                          {"WORLD_SIZE", "2"},
                          {"MASTER_ADDR", "a"},
                          {"SLURM_PROCID", "0"},
                          {"SLURM_NTASKS", "1"}});
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.worldSize, 2);
}

TEST(ProcessEnv, OpenMpiVariablesPlaceTheRank) {
  ProcessEnv local = parse({{"OMPI_COMM_WORLD_RANK", "3"},
                            {"OMPI_COMM_WORLD_SIZE", "4"},
                            {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                            {"OMPI_MCA_ess_base_jobid", "1694957569"}});
  EXPECT_EQ(local.rank, 3);
  EXPECT_EQ(local.worldSize, 4);
  EXPECT_EQ(local.masterAddr, "127.0.0.1");
  EXPECT_EQ(local.masterPort, 20000 + 1694957569 % 40000) << "the port follows the job's id";
  EXPECT_EQ(errorOf({{"OMPI_COMM_WORLD_RANK", "3"},
                     {"OMPI_COMM_WORLD_SIZE", "4"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
            "mpirun started ranks on several hosts but MASTER_ADDR is not set: export rank 0's "
            "host to every rank (mpirun -x MASTER_ADDR=HOST ...)");
}

// Open MPI 5 names its jobs: every rank of one job derives one port, and two
// jobs get different ones; a rank with neither id must be given MASTER_PORT.
TEST(ProcessEnv, OpenMpiJobNamesGiveEveryRankOnePort) {
  auto rankOf = [](const std::string& rank, const std::string& job) {
    return parse({{"OMPI_COMM_WORLD_RANK", rank},
                  {"OMPI_COMM_WORLD_SIZE", "2"},
                  {"OMPI_COMM_WORLD_LOCAL_RANK", rank},
                  {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                  {"PMIX_NAMESPACE", job}});
  };
  ProcessEnv first = rankOf("0", "prterun-node1-4242@1");
  EXPECT_EQ(rankOf("1", "prterun-node1-4242@1").masterPort, first.masterPort);
  EXPECT_NE(rankOf("0", "prterun-node1-4243@1").masterPort, first.masterPort);
  EXPECT_GE(first.masterPort, 20000);
  EXPECT_LT(first.masterPort, 60000);
  EXPECT_NE(errorOf({{"OMPI_COMM_WORLD_RANK", "0"},
                     {"OMPI_COMM_WORLD_SIZE", "1"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}})
                .find("export MASTER_PORT to every rank"),
            std::string::npos);
}

TEST(ProcessEnv, SlurmHostListsAndTaskCountsExpand) {
  EXPECT_EQ(expandHostList("node[01-04,07]"),
            (std::vector<std::string>{"node01", "node02", "node03", "node04", "node07"}));
  EXPECT_EQ(
      expandHostList("a1,rack[1-2]-n[9-10],b"),
      (std::vector<std::string>{"a1", "rack1-n9", "rack1-n10", "rack2-n9", "rack2-n10", "b"}));
  EXPECT_EQ(expandTasksPerNode("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_THROW(expandHostList("node[01-04"), ConfigError);
  EXPECT_THROW(expandHostList("node[4-1]"), ConfigError);
  EXPECT_EQ(errorOf({{"SLURM_PROCID", "0"},
                     {"SLURM_NTASKS", "2"},
                     {"SLURM_LOCALID", "0"},
                     {"SLURM_NODEID", "0"},
                     {"SLURM_TASKS_PER_NODE", "2(x"},
                     {"SLURM_JOB_NODELIST", "n1"}}),
            "SLURM_TASKS_PER_NODE must look like '2(x3),1', got '2(x'");
  EXPECT_EQ(errorOf({{"SLURM_PROCID", "0"},
                     {"SLURM_NTASKS", "1"},
                     {"SLURM_LOCALID", "x"},
                     {"SLURM_NODEID", "0"},
                     {"SLURM_JOB_NODELIST", "n1"},
                     {"SLURM_JOB_ID", "1"}}),
            "SLURM_LOCALID must be a non-negative integer, got 'x'");
}

}  // namespace
}  // namespace strata

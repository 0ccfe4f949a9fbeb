// `strata launch`'s flags in Strata's spelling and torchrun's, parsed as the
// binary parses them, without starting anything.
#include "strata/launch/launch_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <map>

#include "strata/error.h"
#include "strata/util/command_line.h"

namespace strata {
namespace {

// `strata launch ARGS`, with neither STRATA_TIMEOUT nor STRATA_JOB_TOKEN set.
LaunchOptions parseLaunch(std::vector<std::string> args) {
  unsetenv("STRATA_TIMEOUT");
  unsetenv("STRATA_JOB_TOKEN");
  CLI::App strata("", "strata");
  LaunchFlags flags(*strata.add_subcommand("launch"));
  args.insert(args.begin(), "launch");
  parseCommandLine(strata, args);
  return flags.options();
}

std::string errorOf(const std::vector<std::string>& args) {
  try {
    parseLaunch(args);
  } catch (const FlagError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LaunchFlags, TorchrunSpellingsSetTheSameOptions) {
  for (const char* separator : {"_", "-"}) {
    auto flag = [&](std::string words) {
      for (char& c : words) {
        if (c == ' ') c = *separator;
      }
      return "--" + words;
    };
    LaunchOptions o = parseLaunch({flag("nproc per node"), "4", "--nnodes", "2", flag("node rank"),
                                   "1", flag("master addr"), "10.0.0.1", flag("master port"),
                                   "29500", flag("max restarts"), "3", "--", "python", "x.py"});
    EXPECT_EQ(o.nprocPerNode, 4) << separator;
    EXPECT_EQ(o.nnodes, 2);
    EXPECT_EQ(o.nodeRank, 1);
    EXPECT_EQ(o.masterAddr, "10.0.0.1");
    EXPECT_EQ(o.masterPort, 29500);
    EXPECT_EQ(o.maxRestarts, 3);
    EXPECT_EQ(o.command, (std::vector<std::string>{"python", "x.py"}));
  }
}

TEST(LaunchFlags, RendezvousEndpointSetsMasterAddressAndPort) {
  for (const char* spelling : {"--rdzv-endpoint", "--rdzv_endpoint"}) {
    LaunchOptions o = parseLaunch({"--nnodes", "2", spelling, "node0.cluster:29400", "--", "w"});
    EXPECT_EQ(o.masterAddr, "node0.cluster") << spelling;
    EXPECT_EQ(o.masterPort, 29400) << spelling;
  }
  LaunchOptions v6 = parseLaunch({"--rdzv-endpoint=[fd00::1]:1234", "--", "w"});
  EXPECT_EQ(v6.masterAddr, "fd00::1");
  EXPECT_EQ(v6.masterPort, 1234);
}

TEST(LaunchFlags, AMalformedEndpointIsNamed) {
  for (const char* bad : {"node0", "node0:", ":29400", "node0:port", "node0:70000", "[]:80"}) {
    EXPECT_NE(errorOf({"--rdzv-endpoint", bad, "--", "w"})
                  .find("--rdzv-endpoint expects HOST:PORT with PORT in [0, 65535], got '" +
                        std::string(bad) + "'"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(errorOf({"--rdzv-endpoint", "a:1", "--master-port", "2", "--", "w"}).find("excludes"),
            std::string::npos);
}

// As torchrun takes its script: the first argument that is not a flag
// starts the worker command, and the worker's own flags stay its own.
TEST(LaunchFlags, TheWorkerCommandStartsAtTheFirstArgumentThatIsNotAFlag) {
  LaunchOptions o = parseLaunch({"--nproc_per_node", "2", "train.py", "--lr", "3", "--", "x"});
  EXPECT_EQ(o.nprocPerNode, 2);
  EXPECT_EQ(o.command, (std::vector<std::string>{"train.py", "--lr", "3", "--", "x"}));
  LaunchOptions dashed = parseLaunch({"--", "strata", "train", "--nproc-per-node", "9"});
  EXPECT_EQ(dashed.nprocPerNode, 1);
  EXPECT_EQ(dashed.command, (std::vector<std::string>{"strata", "train", "--nproc-per-node", "9"}));
}

TEST(LaunchFlags, BadFlagsAreNamed) {
  EXPECT_NE(errorOf({"--nproc_per_node", "two", "--", "w"})
                .find("--nproc-per-node expects an integer, got 'two'"),
            std::string::npos);
  EXPECT_NE(errorOf({"--master-port", "65536", "--", "w"})
                .find("--master-port must be at most 65535, got 65536"),
            std::string::npos);
  EXPECT_NE(errorOf({"--nproc-per-nodes", "2", "--", "w"}).find("unknown flag '--nproc-per-nodes'"),
            std::string::npos);
  EXPECT_NE(errorOf({"--nproc-per-node", "2"}).find("no worker command"), std::string::npos);
}

TEST(LaunchFlags, TheEnvironmentStandsInForFlagsNotGiven) {
  setenv("STRATA_JOB_TOKEN", "from-env", 1);
  setenv("STRATA_TIMEOUT", "42", 1);
  CLI::App strata("", "strata");
  LaunchFlags flags(*strata.add_subcommand("launch"));
  parseCommandLine(strata, {"launch", "--job-token", "from-flag", "--", "w"});
  LaunchOptions o = flags.options();
  EXPECT_EQ(o.jobToken, "from-flag");
  EXPECT_DOUBLE_EQ(o.timeoutSeconds, 42);
  unsetenv("STRATA_JOB_TOKEN");
  unsetenv("STRATA_TIMEOUT");
}

// The variables a cluster sets, set here for one test and removed after.
class ClusterVariables {
 public:
  explicit ClusterVariables(std::map<std::string, std::string> values)
      : values_(std::move(values)) {
    for (const auto& [name, value] : values_) setenv(name.c_str(), value.c_str(), 1);
  }
  ~ClusterVariables() {
    for (const auto& [name, value] : values_) unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::string> values_;
};

// What Kubeflow's PyTorchJob sets for a worker pod.
TEST(LaunchFlags, KubeflowVariablesStandInForMissingFlags) {
  ClusterVariables pet({{"PET_NPROC_PER_NODE", "3"},
                        {"PET_NNODES", "2:2"},
                        {"PET_NODE_RANK", "1"},
                        {"PET_RDZV_ENDPOINT", "job-master-0:23456"},
                        {"PET_MAX_RESTARTS", "2"}});
  LaunchOptions o = parseLaunch({"--", "strata", "train"});
  EXPECT_EQ(o.nprocPerNode, 3);
  EXPECT_EQ(o.nnodes, 2);
  EXPECT_EQ(o.nodeRank, 1);
  EXPECT_EQ(o.masterAddr, "job-master-0");
  EXPECT_EQ(o.masterPort, 23456);
  EXPECT_EQ(o.maxRestarts, 2);
  LaunchOptions flagsWin =
      parseLaunch({"--nproc-per-node", "2", "--rdzv-endpoint", "h:1", "--", "strata", "train"});
  EXPECT_EQ(flagsWin.nprocPerNode, 2);
  EXPECT_EQ(flagsWin.masterAddr, "h");
  EXPECT_EQ(flagsWin.masterPort, 1);
  EXPECT_EQ(flagsWin.nodeRank, 1);
}

// An Indexed Job per replica group: node rank = group offset + index.
TEST(LaunchFlags, IndexedJobCompletionIndexIsTheNodeRank) {
  ClusterVariables indexed({{"JOB_COMPLETION_INDEX", "1"},
                            {"STRATA_NODE_RANK_OFFSET", "2"},
                            {"PET_NNODES", "4"},
                            {"PET_MASTER_ADDR", "job-g0-0.job"},
                            {"PET_MASTER_PORT", "29500"}});
  LaunchOptions o = parseLaunch({"--", "strata", "train"});
  EXPECT_EQ(o.nodeRank, 3);
  EXPECT_EQ(o.masterAddr, "job-g0-0.job");
  EXPECT_EQ(parseLaunch({"--node-rank", "0", "--", "x"}).nodeRank, 0);
}

std::string environmentErrorOf(const std::map<std::string, std::string>& values) {
  ClusterVariables set(values);
  try {
    parseLaunch({"--", "x"});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// --nnodes MIN:MAX (or PET_NNODES) makes the job elastic; N and N:N do not.
TEST(LaunchFlags, NodeRangesMakeTheJobElastic) {
  LaunchOptions elastic =
      parseLaunch({"--nnodes", "2:4", "--master-port", "29500", "--join-wait", "3", "--", "x"});
  EXPECT_EQ(elastic.nnodes, 4);
  EXPECT_EQ(elastic.fewestNodes(), 2);
  EXPECT_TRUE(elastic.elastic());
  EXPECT_DOUBLE_EQ(elastic.joinWaitSeconds, 3);
  LaunchOptions fixed = parseLaunch({"--nnodes", "3:3", "--master-port", "29500", "--", "x"});
  EXPECT_EQ(fixed.nnodes, 3);
  EXPECT_FALSE(fixed.elastic());
  {
    ClusterVariables pet({{"PET_NNODES", "1:3"}, {"PET_MASTER_PORT", "29500"}});
    LaunchOptions fromKubeflow = parseLaunch({"--", "x"});
    EXPECT_EQ(fromKubeflow.nnodes, 3);
    EXPECT_EQ(fromKubeflow.fewestNodes(), 1);
  }
  EXPECT_THROW(parseLaunch({"--nnodes", "3:2", "--", "x"}), FlagError);
  EXPECT_THROW(parseLaunch({"--nnodes", "0:2", "--", "x"}), FlagError);
}

TEST(LaunchFlags, MalformedClusterVariablesAreNamed) {
  EXPECT_EQ(environmentErrorOf({{"PET_NNODES", "4:1"}}),
            "PET_NNODES must be a node count N or a range MIN:MAX with 1 <= MIN <= MAX, got "
            "'4:1'");
  EXPECT_EQ(environmentErrorOf({{"PET_NPROC_PER_NODE", "auto"}}),
            "PET_NPROC_PER_NODE must be an integer in [1, 1048576], got 'auto'");
  EXPECT_EQ(environmentErrorOf({{"JOB_COMPLETION_INDEX", "-1"}}),
            "JOB_COMPLETION_INDEX must be an integer in [0, 1048576], got '-1'");
  EXPECT_EQ(environmentErrorOf({{"PET_RDZV_ENDPOINT", "nohost"}}),
            "PET_RDZV_ENDPOINT must be HOST:PORT, got 'nohost'");
}

TEST(LaunchFlags, TheEtcdBackendTakesEtcdsEndpoints) {
  for (const char* name : {"etcd", "etcd-v2"}) {
    LaunchOptions o = parseLaunch({"--nnodes", "3", "--rdzv-backend", name, "--rdzv-endpoint",
                                   "10.0.0.5:2379,http://10.0.0.6:2379", "--", "w"});
    EXPECT_EQ(o.rdzvBackend, RendezvousBackend::kEtcd) << name;
    EXPECT_EQ(o.etcdEndpoints, (std::vector<std::string>{"10.0.0.5:2379", "10.0.0.6:2379"}));
  }
  EXPECT_EQ(parseLaunch({"--rdzv-backend", "static", "--", "w"}).rdzvBackend,
            RendezvousBackend::kStatic);
  EXPECT_NE(errorOf({"--rdzv-backend", "etcd", "--nnodes", "2", "--", "w"})
                .find("--rdzv-backend etcd needs --rdzv-endpoint"),
            std::string::npos);
  EXPECT_NE(errorOf({"--rdzv-backend", "zookeeper", "--", "w"})
                .find("--rdzv-backend expects c10d, static, etcd or etcd-v2, got 'zookeeper'"),
            std::string::npos);
  EXPECT_NE(errorOf({"--rdzv-backend", "etcd", "--rdzv-endpoint", "https://e:2379", "--", "w"})
                .find("--rdzv-endpoint expects etcd's client endpoints"),
            std::string::npos);
  ClusterVariables pet(
      {{"PET_RDZV_BACKEND", "etcd"}, {"PET_RDZV_ENDPOINT", "etcd-0:2379,etcd-1:2379"}});
  LaunchOptions fromKubeflow = parseLaunch({"--nnodes", "2", "--", "w"});
  EXPECT_EQ(fromKubeflow.rdzvBackend, RendezvousBackend::kEtcd);
  EXPECT_EQ(fromKubeflow.etcdEndpoints.size(), 2u);
}

}  // namespace
}  // namespace strata

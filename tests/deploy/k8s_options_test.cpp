// The options of `strata k8s`: per-node worker counts, flavors, and what
// checkK8sOptions refuses, each error naming the flag and the value.
#include "strata/deploy/k8s_options.h"

#include <gtest/gtest.h>

#include "k8s_test_util.h"
#include "strata/deploy/node_groups.h"

namespace strata::deploy {
namespace {

K8sOptions valid() {
  K8sOptions o;
  o.image = "strata:1";
  o.workersPerNode = {3, 2};
  return o;
}

void expectRefused(const std::function<void(K8sOptions&)>& change,
                   const std::vector<std::string>& parts) {
  K8sOptions o = valid();
  change(o);
  expectErrorNaming([&] { checkK8sOptions(o); }, parts);
}

TEST(K8sOptions, OneCountIsEveryNodesCount) {
  EXPECT_EQ(workersPerNodeList(3, "4"), (std::vector<int64_t>{4, 4, 4}));
}

TEST(K8sOptions, ACountPerNodeIsKeptInNodeOrder) {
  EXPECT_EQ(workersPerNodeList(3, "3,3,2"), (std::vector<int64_t>{3, 3, 2}));
}

TEST(K8sOptions, RefusesZeroNodes) {
  expectErrorNaming([] { workersPerNodeList(0, "4"); }, {"--nodes must be at least 1, got 0"});
}

TEST(K8sOptions, RefusesAListWhoseLengthIsNotTheNodes) {
  expectErrorNaming([] { workersPerNodeList(3, "3,2"); },
                    {"--workers-per-node 3,2 gives 2 counts for --nodes 3"});
}

TEST(K8sOptions, RefusesCountsThatAreNotPositiveIntegers) {
  for (const char* bad : {"0", "3,-1", "3,,2", "two", "3,2x", ""}) {
    expectErrorNaming([&] { workersPerNodeList(2, bad); },
                      {"--workers-per-node '" + std::string(bad) + "'", "at least 1"});
  }
}

TEST(K8sOptions, FlavorsAreJobAndPyTorchJob) {
  EXPECT_EQ(parseFlavor("job"), K8sFlavor::kIndexedJob);
  EXPECT_EQ(parseFlavor("pytorchjob"), K8sFlavor::kPyTorchJob);
  expectErrorNaming([] { parseFlavor("mpijob"); },
                    {"--flavor must be job or pytorchjob, got 'mpijob'"});
}

TEST(K8sOptions, AcceptsAValidJob) {
  EXPECT_NO_THROW(checkK8sOptions(valid()));
  EXPECT_EQ(worldSize(valid()), 5);
}

TEST(K8sOptions, RefusesAMissingImage) {
  expectRefused([](K8sOptions& o) { o.image.clear(); }, {"--image is required"});
}

TEST(K8sOptions, RefusesNonPositiveCounts) {
  expectRefused([](K8sOptions& o) { o.workersPerNode.clear(); }, {"--nodes must be at least 1"});
  expectRefused(
      [](K8sOptions& o) {
        o.workersPerNode = {3, 0};
      },
      {"--workers-per-node 3,0", "got 0"});
  expectRefused([](K8sOptions& o) { o.gpusPerWorker = -1; }, {"--gpus-per-worker", "-1"});
  expectRefused([](K8sOptions& o) { o.maxRestarts = -2; }, {"--max-restarts", "-2"});
  expectRefused([](K8sOptions& o) { o.port = 0; }, {"--port", "got 0"});
  expectRefused([](K8sOptions& o) { o.port = 70000; }, {"--port", "70000"});
}

TEST(K8sOptions, RefusesMalformedOrZeroQuantities) {
  expectRefused([](K8sOptions& o) { o.memoryPerWorker = "16GB"; }, {"--memory", "'16GB'"});
  expectRefused([](K8sOptions& o) { o.cpuPerWorker = "1e3"; }, {"--cpu", "'1e3'"});
  expectRefused([](K8sOptions& o) { o.shmSize = "0Gi"; }, {"--shm-size must be above 0, got 0Gi"});
  expectRefused([](K8sOptions& o) { o.checkpointSize = "lots"; }, {"--checkpoint-size", "'lots'"});
}

TEST(K8sOptions, AnExistingClaimNeedsNoSize) {
  K8sOptions o = valid();
  o.checkpointClaim = "team.checkpoints";
  o.checkpointSize = "unused";
  EXPECT_NO_THROW(checkK8sOptions(o));
}

TEST(K8sOptions, RefusesNamesKubernetesRefuses) {
  expectRefused([](K8sOptions& o) { o.name = "My_Job"; }, {"--name 'My_Job' is not a valid name"});
  expectRefused([](K8sOptions& o) { o.name = "7up"; }, {"--name '7up'", "starting with a letter"});
  expectRefused([](K8sOptions& o) { o.name = std::string(64, 'a'); }, {"at most 63"});
  expectRefused([](K8sOptions& o) { o.namespaceName = "a.b"; }, {"--namespace 'a.b'"});
  expectRefused([](K8sOptions& o) { o.checkpointClaim = "-claim"; },
                {"--checkpoint-claim '-claim'"});
}

TEST(K8sOptions, PyTorchJobTakesTheMastersCountAndOneForAllWorkers) {
  K8sOptions o = valid();
  o.flavor = K8sFlavor::kPyTorchJob;
  o.workersPerNode = {4, 2, 2, 2};
  EXPECT_NO_THROW(checkK8sOptions(o));
  o.workersPerNode = {4, 2, 3};
  expectErrorNaming([&] { checkK8sOptions(o); }, {"--flavor pytorchjob", "--workers-per-node 4,2,3",
                                                  "Workers 2,3", "--flavor job"});
}

TEST(NodeGroups, RunsOfEqualNodesWithTheirFirstNodeAndRank) {
  std::vector<NodeGroup> groups = nodeGroups({3, 3, 2, 3});
  ASSERT_EQ(groups.size(), 3u);
  auto expectGroup = [](const NodeGroup& g, int64_t node, int64_t nodes, int64_t workers,
                        int64_t rank) {
    EXPECT_EQ(g.firstNode, node);
    EXPECT_EQ(g.nodes, nodes);
    EXPECT_EQ(g.workersPerNode, workers);
    EXPECT_EQ(g.firstRank, rank);
  };
  expectGroup(groups[0], 0, 2, 3, 0);
  expectGroup(groups[1], 2, 1, 2, 6);
  expectGroup(groups[2], 3, 1, 3, 8);
  EXPECT_EQ(nodeGroups({4, 4}).size(), 1u);
}

}  // namespace
}  // namespace strata::deploy

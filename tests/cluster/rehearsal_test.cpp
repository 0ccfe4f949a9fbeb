// Several nodes rehearsed on one machine (rehearsal_cluster.h): each node a
// network namespace running its own `strata launch`, the links between them
// shaped to 1 Gbit/s, the workers of a node sharing memory. What a job
// across machines must do: form with nodes of different sizes, train exactly
// what one process trains, start in any order, and fail fast and by name
// when a link or a node goes away. Nodes run as plain processes in their
// namespaces, and, where podman works, some tests again with each node a
// container of this build's image.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <thread>

#include "child_process.h"
#include "reference_comparison.h"
#include "rehearsal_cluster.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

using strata::testing::after;
using strata::testing::ChildProcess;
using strata::testing::RehearsalCluster;
using strata::testing::RehearsalOptions;

constexpr int kPort = 29400;  // inside the cluster's namespaces, which nothing else uses
// Launchers and up to 8 workers starting on a loaded 2-core machine, then a
// few steps of the tiny GPT: far above the usual seconds.
constexpr std::chrono::seconds kJobLimit{240};

#define SKIP_WITHOUT_REHEARSAL()                                          \
  do {                                                                    \
    std::string why = RehearsalCluster::unavailableReason();              \
    if (!why.empty()) GTEST_SKIP() << "no multi-node rehearsal: " << why; \
  } while (false)

struct Job {
  std::vector<int> workersPerNode;
  std::vector<std::string> worker;  // the command each worker runs
  std::string master = RehearsalCluster::hostName(0);
  double timeoutSeconds = 60;
};

std::unique_ptr<ChildProcess> startNode(const RehearsalCluster& cluster, const Job& job, int node) {
  SpawnSpec spec;
  spec.argv = cluster.commandPrefix(node);
  spec.argv.insert(spec.argv.end(),
                   {cluster.binary(STRATA_BINARY), "launch", "--nproc-per-node",
                    std::to_string(job.workersPerNode[node]), "--nnodes",
                    std::to_string(job.workersPerNode.size()), "--node-rank", std::to_string(node),
                    "--rdzv-endpoint", job.master + ":" + std::to_string(kPort), "--timeout",
                    std::to_string(job.timeoutSeconds), "--"});
  spec.argv.insert(spec.argv.end(), job.worker.begin(), job.worker.end());
  return std::make_unique<ChildProcess>(spec);
}

std::vector<std::string> recordingWorker(const RehearsalCluster& cluster, const std::string& dir,
                                         const TrainConfig& c) {
  return {cluster.binary(NODE_TRAINER),
          "record",
          dir,
          std::to_string(c.model.layers),
          std::to_string(c.parallel.pp),
          std::to_string(c.parallel.dp),
          std::to_string(c.parallel.tp),
          c.parallel.schedule,
          std::to_string(c.train.seed)};
}

std::vector<std::string> foreverWorker(const RehearsalCluster& cluster, int pp) {
  return {cluster.binary(NODE_TRAINER), "forever", "4", std::to_string(pp), "1", "1", "1f1b", "1"};
}

// Waits for every launcher; true when all exited 0. Appends their output.
bool finish(std::vector<std::unique_ptr<ChildProcess>>& nodes, std::string* output) {
  bool ok = true;
  strata::testing::Deadline deadline = after(kJobLimit);
  for (auto& node : nodes) {
    std::optional<ExitStatus> status = node->waitForExit(deadline);
    ok = ok && status && status->success();
    *output += node->output();
  }
  return ok;
}

// The image of this build's strata and node_trainer, for the tests that run
// nodes as containers.
std::unique_ptr<strata::testing::RehearsalImage> containerImage() {
  return std::make_unique<strata::testing::RehearsalImage>(STRATA_SOURCE_DIR, STRATA_BUILD_DIR,
                                                           std::vector<std::string>{NODE_TRAINER});
}

#define SKIP_WITHOUT_CONTAINERS(image)                                                 \
  do {                                                                                 \
    if ((image).name().empty()) GTEST_SKIP() << "no containers: " << (image).whyNot(); \
  } while (false)

// Trains `config` over the cluster's nodes (containers of `image`, or plain
// processes when it is empty) and compares with the reference.
void expectEqualsOneProcess(const std::string& name, const TrainConfig& config,
                            const std::vector<int>& workersPerNode, const std::string& image = "") {
  std::string dir = sharedDir(name);
  RehearsalOptions options;
  options.nodes = static_cast<int>(workersPerNode.size());
  options.linkGbitPerSecond = 1;
  options.image = image;
  options.sharedPaths = {dir};
  RehearsalCluster cluster(options);
  Job job{workersPerNode, recordingWorker(cluster, dir, config)};
  std::vector<std::unique_ptr<ChildProcess>> nodes;
  for (int node = 0; node < cluster.nodes(); ++node) nodes.push_back(startNode(cluster, job, node));
  std::string output;
  ASSERT_TRUE(finish(nodes, &output)) << output;
  if (cluster.inContainers()) {  // each node its own host, as a pod is
    EXPECT_NE(output.find("on node 1 (node1) of"), std::string::npos) << output;
  }
  int processes = 0;
  for (int n : workersPerNode) processes += n;
  expectRunMatchesReference(dir, processes, config);
  removeSharedDir(dir);
}

// The picture Strata was designed around: 7 layers (embedding, 5 blocks,
// head) over 5 workers, 3 on one node and 2 on the other, cut by measured
// cost, 1F1B.
TrainConfig sevenLayersOverFiveStages() {
  TrainConfig config = tinyConfig();
  config.model.layers = 5;
  config.parallel.pp = 5;
  config.parallel.schedule = "1f1b";
  config.train.seed = 2;  // as in TrainerEqualsReference.Pp5SevenLayersOneFOneB
  return config;
}

TEST(Rehearsal, SevenLayersOverThreePlusTwoWorkersEqualOneProcess) {
  SKIP_WITHOUT_REHEARSAL();
  expectEqualsOneProcess("rehearsal_3_2", sevenLayersOverFiveStages(), {3, 2});
}

// The same with each node a container of the build's image, as pods are:
// its own /dev/shm, pids and hostname.
TEST(Rehearsal, SevenLayersOverThreePlusTwoWorkersInContainersEqualOneProcess) {
  SKIP_WITHOUT_REHEARSAL();
  auto image = containerImage();
  SKIP_WITHOUT_CONTAINERS(*image);
  expectEqualsOneProcess("rehearsal_3_2_containers", sevenLayersOverFiveStages(), {3, 2},
                         image->name());
}

// All three dimensions over two nodes of 4: tp inside each node, the
// pipeline across them.
TEST(Rehearsal, GptPp2Dp2Tp2OverTwoNodesEqualsOneProcess) {
  SKIP_WITHOUT_REHEARSAL();
  TrainConfig config = tinyConfig();
  config.parallel.pp = 2;
  config.parallel.dp = 2;
  config.parallel.tp = 2;
  config.parallel.schedule = "1f1b";
  expectEqualsOneProcess("rehearsal_pp2dp2tp2", config, {4, 4});
}

// Pods start in any order and their DNS names appear late: node 1 starts
// first, while node 0's name does not resolve, and says what it waits for;
// the name appears 9 s later, node 0 itself 17 s later; the job forms.
TEST(Rehearsal, NodesStartedInReverseOrderWhileNamesAppear) {
  SKIP_WITHOUT_REHEARSAL();
  RehearsalOptions options;
  options.namesResolve = false;
  RehearsalCluster cluster(options);
  Job job{
      {1, 1},
      {NODE_TRAINER, "record", sharedDir("rehearsal_reverse"), "4", "2", "1", "1", "1f1b", "1"}};
  std::vector<std::unique_ptr<ChildProcess>> nodes;
  nodes.push_back(startNode(cluster, job, 1));
  // The launcher's own clock starts a moment after ours: its first progress
  // line (5 s) must come while the name is still missing.
  std::this_thread::sleep_for(std::chrono::seconds(9));
  cluster.publishNames();
  std::this_thread::sleep_for(std::chrono::seconds(8));
  nodes.insert(nodes.begin(), startNode(cluster, job, 0));
  std::string output;
  EXPECT_TRUE(finish(nodes, &output)) << output;
  const std::string& waiting = nodes[1]->output();
  EXPECT_NE(waiting.find("waiting for the rendezvous store at node0:" + std::to_string(kPort) +
                         ": the name 'node0' does not resolve yet"),
            std::string::npos)
      << waiting;
  EXPECT_NE(waiting.find("waiting for the rendezvous store at node0:" + std::to_string(kPort) +
                         ": no connection yet"),
            std::string::npos)
      << waiting;
  removeSharedDir(sharedDir("rehearsal_reverse"));
}

// A started job of one worker per node, once node 0's worker has trained a
// few steps.
std::vector<std::unique_ptr<ChildProcess>> startTrainingJob(const RehearsalCluster& cluster,
                                                            double timeoutSeconds) {
  Job job{{1, 1}, foreverWorker(cluster, 2)};
  job.timeoutSeconds = timeoutSeconds;
  std::vector<std::unique_ptr<ChildProcess>> nodes;
  for (int node = 0; node < 2; ++node) nodes.push_back(startNode(cluster, job, node));
  bool training = nodes[0]->waitForOutput(
      [](const std::string& out) { return out.find("] step 3") != std::string::npos; },
      after(kJobLimit));
  EXPECT_TRUE(training) << nodes[0]->output() << nodes[1]->output();
  return nodes;
}

// Both launchers exit non-zero within `limit`; returns their output.
std::string expectBothFailWithin(std::vector<std::unique_ptr<ChildProcess>>& nodes,
                                 std::chrono::seconds limit) {
  std::string output;
  strata::testing::Deadline deadline = after(limit);
  for (size_t node = 0; node < nodes.size(); ++node) {
    std::optional<ExitStatus> status = nodes[node]->waitForExit(deadline);
    output += nodes[node]->output();
    EXPECT_TRUE(status) << "node " << node << "'s launcher still ran after " << limit.count()
                        << " s:\n"
                        << nodes[node]->output();
    if (status) {
      EXPECT_FALSE(status->success()) << nodes[node]->output();
    }
  }
  return output;
}

// A cable pulled mid-step: every rank fails within the timeout naming the
// peer it waited for, both launchers exit non-zero, nothing hangs. The limit
// is the 10 s timeout, the launchers' settle and stop, and a loaded machine.
TEST(Rehearsal, LinkCutMidStepFailsEveryRankNamingItsPeer) {
  SKIP_WITHOUT_REHEARSAL();
  RehearsalCluster cluster(RehearsalOptions{});
  auto nodes = startTrainingJob(cluster, 10);
  cluster.setLinkUp(1, false);
  std::string output = expectBothFailWithin(nodes, std::chrono::seconds(60));
  EXPECT_NE(nodes[0]->output().find("strata launch: rank 0 (local rank 0) failed"),
            std::string::npos)
      << output;
  EXPECT_NE(nodes[1]->output().find("strata launch: rank 1 (local rank 0) failed"),
            std::string::npos)
      << output;
  EXPECT_NE(nodes[0]->output().find("rank 1"), std::string::npos) << output;
}

// One node's launcher killed outright: its workers die with it (the orphan
// guard), and the other node's workers fail on the lost peer in bounded time.
TEST(Rehearsal, KilledLauncherEndsTheOtherNodeInBoundedTime) {
  SKIP_WITHOUT_REHEARSAL();
  RehearsalCluster cluster(RehearsalOptions{});
  auto nodes = startTrainingJob(cluster, 10);
  kill(nodes[1]->pid(), SIGKILL);
  std::string output = expectBothFailWithin(nodes, std::chrono::seconds(60));
  EXPECT_NE(nodes[0]->output().find("strata launch: rank 0 (local rank 0) failed"),
            std::string::npos)
      << output;
}

// A node's container killed, as a pod whose machine goes away: the other
// node's launcher reports its worker's failure within the bound.
TEST(Rehearsal, KilledNodeContainerEndsTheOtherNodeInBoundedTime) {
  SKIP_WITHOUT_REHEARSAL();
  auto image = containerImage();
  SKIP_WITHOUT_CONTAINERS(*image);
  RehearsalOptions options;
  options.image = image->name();
  RehearsalCluster cluster(options);
  auto nodes = startTrainingJob(cluster, 10);
  cluster.killNode(1);
  std::string output = expectBothFailWithin(nodes, std::chrono::seconds(60));
  EXPECT_NE(nodes[0]->output().find("strata launch: rank 0 (local rank 0) failed"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace strata::train::testing

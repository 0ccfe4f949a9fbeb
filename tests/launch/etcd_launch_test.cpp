// `strata launch --rdzv-backend etcd` with a real etcd server: launchers that
// meet in etcd form one job, an elastic job survives the loss of node 0 (its
// launcher SIGKILLed mid-run: under the static backend that loses the store
// and the job), an ended job's run id is refused, and so are a node with
// another token and an etcd nobody can reach.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <thread>

#include "child_process.h"
#include "etcd_server.h"

namespace strata {
namespace {

using testing::after;
using testing::ChildProcess;

constexpr std::chrono::seconds kEtcdJobLimit{90};

struct EtcdNode {
  int nodeRank = 0;
  std::string nodes = "2";  // --nnodes
  std::string mode = "ok";  // the launch worker's behaviour
  std::vector<std::string> extra = {};
  std::string timeout = "20";  // --timeout
};

std::unique_ptr<ChildProcess> startNode(const std::string& endpoint, const EtcdNode& node) {
  SpawnSpec spec;
  spec.argv = {STRATA_BINARY,      "launch",   "--rdzv-backend", "etcd",
               "--rdzv-endpoint",  endpoint,   "--rdzv-id",      "job-1",
               "--nnodes",         node.nodes, "--node-rank",    std::to_string(node.nodeRank),
               "--nproc-per-node", "1",        "--timeout",      node.timeout};
  spec.argv.insert(spec.argv.end(), node.extra.begin(), node.extra.end());
  spec.argv.insert(spec.argv.end(), {"--", LAUNCH_WORKER, node.mode});
  return std::make_unique<ChildProcess>(spec);
}

bool shows(const ChildProcess& p, const std::string& part) {
  return p.output().find(part) != std::string::npos;
}

TEST(LaunchEtcd, LaunchersThatMeetInEtcdFormOneJob) {
  testing::EtcdServer etcd;
  auto first = startNode(etcd.endpoint(), {0});
  auto second = startNode(etcd.endpoint(), {1});
  for (ChildProcess* node : {first.get(), second.get()}) {
    std::optional<ExitStatus> status = node->waitForExit(after(kEtcdJobLimit));
    EXPECT_TRUE(status && status->success()) << node->output();
    EXPECT_TRUE(shows(*node, "sum 2")) << node->output();
    EXPECT_TRUE(shows(*node, "rendezvous at etcd at " + etcd.endpoint())) << node->output();
  }
}

// Three one-worker nodes, elastic 2:3: node 0's launcher is SIGKILLed (its
// workers die with it); nodes 1 and 2 re-form the job on the two of them
// and finish.
TEST(LaunchEtcd, AnElasticJobSurvivesTheLossOfNodeZero) {
  testing::EtcdServer etcd;
  std::vector<std::unique_ptr<ChildProcess>> nodes;
  for (int rank = 0; rank < 3; ++rank) {
    nodes.push_back(startNode(
        etcd.endpoint(), {rank, "2:3", "elastic", {"--max-restarts", "1", "--join-wait", "2"}}));
  }
  ASSERT_TRUE(nodes[0]->waitForOutput(
      [](const std::string& out) { return out.find("ready") != std::string::npos; },
      after(kEtcdJobLimit)))
      << nodes[0]->output();
  kill(nodes[0]->pid(), SIGKILL);
  for (int rank = 1; rank < 3; ++rank) {
    std::optional<ExitStatus> status = nodes[rank]->waitForExit(after(kEtcdJobLimit));
    const std::string& out = nodes[rank]->output();
    ASSERT_TRUE(status && status->success()) << out;
    EXPECT_TRUE(shows(*nodes[rank], "round 0 world 3")) << out;
    EXPECT_TRUE(shows(*nodes[rank], "round 1 world 2")) << out;
    EXPECT_TRUE(shows(*nodes[rank], "of 2 (elastic 2:3) (workers per node 1,1, world size 2)"))
        << out;
  }
}

TEST(LaunchEtcd, ARunIdThatEndedIsRefused) {
  testing::EtcdServer etcd;
  auto alone = startNode(etcd.endpoint(), {0, "1"});
  std::optional<ExitStatus> status = alone->waitForExit(after(kEtcdJobLimit));
  ASSERT_TRUE(status && status->success()) << alone->output();
  auto again = startNode(etcd.endpoint(), {0, "1"});
  status = again->waitForExit(after(kEtcdJobLimit));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 2) << again->output();
  EXPECT_TRUE(shows(*again, "the job with --rdzv-id job-1 in etcd at " + etcd.endpoint() +
                                " has already ended (exit code 0)"))
      << again->output();
}

TEST(LaunchEtcd, ANodeWithAnotherTokenIsRefused) {
  testing::EtcdServer etcd;
  auto first = startNode(etcd.endpoint(), {0, "2", "ok", {"--job-token", "right"}, "5"});
  std::this_thread::sleep_for(std::chrono::seconds(1));  // its token is the job's
  auto second = startNode(etcd.endpoint(), {1, "2", "ok", {"--job-token", "wrong"}});
  std::optional<ExitStatus> status = second->waitForExit(after(kEtcdJobLimit));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 2) << second->output();
  EXPECT_TRUE(shows(*second, "job token does not match")) << second->output();
  kill(first->pid(), SIGTERM);
  first->waitForExit(after(kEtcdJobLimit));
}

TEST(LaunchEtcd, AnEtcdNobodyCanReachIsNamed) {
  testing::ReservedPort nothing;
  std::string endpoint = "127.0.0.1:" + std::to_string(nothing.number());
  auto node = startNode(endpoint, {0, "2", "ok", {}, "2"});
  std::optional<ExitStatus> status = node->waitForExit(after(kEtcdJobLimit));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 2) << node->output();
  EXPECT_TRUE(shows(*node, "cannot reach etcd at " + endpoint)) << node->output();
}

}  // namespace
}  // namespace strata

// Two launchers as two nodes: on loopback, and on two network namespaces
// joined by a veth pair, each with its own address (the second needs root and
// iproute2; it is skipped without them); and a second node whose job token
// differs, which is refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "multiprocess.h"
#include "strata/util/subprocess.h"

namespace strata {
namespace {

using testing::after;
using testing::ChildProcess;

// Two launchers and four workers starting on a loaded machine, then one
// all-reduce: far above the usual few seconds.
constexpr std::chrono::seconds kMultinodeJobLimit{60};

struct NodeFlags {
  int nodeRank = 0;
  int nproc = 2;
  int nnodes = 2;
  std::vector<std::string> extra;
  std::string nodes = "";                       // --nnodes as given, when not nnodes
  std::string mode = "ok";                      // the launch worker's behaviour
  std::vector<std::string> command = {};        // a worker command instead of the launch worker
  std::map<std::string, std::string> env = {};  // for the launcher and its workers
};

std::unique_ptr<ChildProcess> startNode(std::vector<std::string> prefix, const NodeFlags& node,
                                        const std::string& addr, int port) {
  SpawnSpec spec;
  spec.argv = std::move(prefix);
  spec.argv.insert(spec.argv.end(),
                   {STRATA_BINARY, "launch", "--nproc-per-node", std::to_string(node.nproc),
                    "--nnodes", node.nodes.empty() ? std::to_string(node.nnodes) : node.nodes,
                    "--node-rank", std::to_string(node.nodeRank), "--master-addr", addr,
                    "--master-port", std::to_string(port), "--timeout", "20"});
  spec.argv.insert(spec.argv.end(), node.extra.begin(), node.extra.end());
  spec.setEnv = node.env;
  spec.argv.push_back("--");
  if (node.command.empty()) {
    spec.argv.insert(spec.argv.end(), {LAUNCH_WORKER, node.mode});
  } else {
    spec.argv.insert(spec.argv.end(), node.command.begin(), node.command.end());
  }
  return std::make_unique<ChildProcess>(spec);
}

std::unique_ptr<ChildProcess> startNode(std::vector<std::string> prefix, int nodeRank,
                                        const std::string& addr, int port,
                                        const std::vector<std::string>& extraFlags) {
  return startNode(std::move(prefix), NodeFlags{nodeRank, 2, 2, extraFlags}, addr, port);
}

// Waits for both nodes (at most kMultinodeJobLimit in all) and returns their combined output.
std::string finish(ChildProcess& first, ChildProcess& second, bool* bothSucceeded) {
  *bothSucceeded = true;
  testing::Deadline deadline = after(kMultinodeJobLimit);
  std::string output;
  for (ChildProcess* node : {&first, &second}) {
    std::optional<ExitStatus> status = node->waitForExit(deadline);
    *bothSucceeded = *bothSucceeded && status && status->success();
    output += node->output();
  }
  return output;
}

TEST(MultiNode, TwoLaunchersOnLoopbackFormOneJob) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  bool ok = false;
  auto first = startNode({}, 0, "127.0.0.1", port, {});
  auto second = startNode({}, 1, "127.0.0.1", port, {});
  std::string output = finish(*first, *second, &ok);
  EXPECT_TRUE(ok) << output;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(output.find("[rank " + std::to_string(rank) + "] sum 4"), std::string::npos)
        << output;
  }
}

// The picture Strata was designed around: one node with 3 workers, one with
// 2, forming one job of 5 with ranks in node order.
TEST(MultiNode, NodesOfDifferentSizesFormOneJob) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  bool ok = false;
  auto first = startNode({}, NodeFlags{0, 3, 2, {}}, "127.0.0.1", port);
  auto second = startNode({}, NodeFlags{1, 2, 2, {}}, "127.0.0.1", port);
  std::string output = finish(*first, *second, &ok);
  EXPECT_TRUE(ok) << output;
  for (int rank = 0; rank < 5; ++rank) {
    std::string local =
        rank < 3 ? std::to_string(rank) + " of 3" : std::to_string(rank - 3) + " of 2";
    EXPECT_NE(
        output.find("[rank " + std::to_string(rank) + "] world 5 local " + local + " nodes 3,2"),
        std::string::npos)
        << output;
    EXPECT_NE(output.find("[rank " + std::to_string(rank) + "] sum 5"), std::string::npos)
        << output;
  }
}

// Workers that print their place and exit at once: node 0 finishes while
// node 1 (started a second later) is still reading the agreement. Node 0
// keeps the rendezvous store until node 1 has ended too (the exit barrier),
// so node 1's workers run, every time.
TEST(MultiNode, AFastJobRunsOnEveryNodeEvenWhenNodeZeroFinishesFirst) {
  std::vector<std::string> echo = {"sh", "-c", "echo world=$WORLD_SIZE rank=$RANK"};
  for (int run = 0; run < 3; ++run) {
    testing::ReservedPort reserved;
    int port = reserved.number();
    bool ok = false;
    auto first = startNode({}, NodeFlags{0, 3, 2, {}, "", "", echo}, "127.0.0.1", port);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto second = startNode({}, NodeFlags{1, 2, 2, {}, "", "", echo}, "127.0.0.1", port);
    std::string output = finish(*first, *second, &ok);
    ASSERT_TRUE(ok) << "run " << run << ":\n" << output;
    for (int rank = 0; rank < 5; ++rank)
      EXPECT_NE(output.find("world=5 rank=" + std::to_string(rank)), std::string::npos)
          << "run " << run << ":\n"
          << output;
  }
}

// Node 1's workers fail after node 0's have finished well: node 0's launcher
// exits non-zero too, naming node 1 and its failed rank, so the exit status
// of any launcher is the job's.
TEST(MultiNode, AFailureOnOneNodeIsEveryLaunchersExitStatus) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  std::vector<std::string> echo = {"sh", "-c", "echo rank=$RANK"};
  std::vector<std::string> fail = {"sh", "-c", "sleep 1; exit 3"};
  auto first = startNode({}, NodeFlags{0, 2, 2, {}, "", "", echo}, "127.0.0.1", port);
  auto second = startNode({}, NodeFlags{1, 1, 2, {}, "", "", fail}, "127.0.0.1", port);
  for (ChildProcess* node : {first.get(), second.get()}) {
    std::optional<ExitStatus> status = node->waitForExit(after(kMultinodeJobLimit));
    ASSERT_TRUE(status) << node->output();
    EXPECT_EQ(status->code, 1) << node->output();
  }
  EXPECT_NE(first->output().find("the job failed: node 1 ("), std::string::npos) << first->output();
  EXPECT_NE(first->output().find("ended with exit code 1: rank 2 (local rank 0) failed with exit "
                                 "code 3"),
            std::string::npos)
      << first->output();
}

// Node 0's worker stalls (stopped) instead of failing: node 1's workers time
// out and it restarts the job. Node 0's launcher sees the restart announced
// in the store, stops its stalled worker and joins the next round, where
// the job finishes; without that, node 1 would wait for a round node 0 never
// opens.
TEST(MultiNode, AStalledNodeJoinsTheRestartAnotherNodeAnnounced) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  std::vector<std::string> flags = {"--max-restarts", "1", "--timeout", "5"};
  std::map<std::string, std::string> env = {{"FAIL_RANK", "0"}};
  NodeFlags node0{0, 1, 2, flags, "", "stall-once", {}, env};
  NodeFlags node1{1, 1, 2, flags, "", "stall-once", {}, env};
  auto first = startNode({}, node0, "127.0.0.1", port);
  auto second = startNode({}, node1, "127.0.0.1", port);
  bool ok = false;
  std::string output = finish(*first, *second, &ok);
  EXPECT_TRUE(ok) << output;
  EXPECT_NE(
      first->output().find("failed and restarts the job; this node's workers stop to join it"),
      std::string::npos)
      << first->output();
  EXPECT_NE(output.find("[rank 1] sum 2"), std::string::npos) << output;
}

// An elastic job of three one-worker nodes (--nnodes 2:3): node 2 is killed
// mid-run, the workers of nodes 0 and 1 fail on the lost peer, and their
// launchers re-form the job on the two of them, which then finishes.
TEST(MultiNode, ElasticJobReformsOnTheNodesLeftAfterOneIsKilled) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  std::vector<std::unique_ptr<testing::ChildProcess>> nodes;
  for (int rank = 0; rank < 3; ++rank) {
    NodeFlags flags{rank, 1, 3, {"--max-restarts", "1", "--join-wait", "2"}, "2:3", "elastic"};
    nodes.push_back(startNode({}, flags, "127.0.0.1", port));
  }
  ASSERT_TRUE(nodes[2]->waitForOutput(
      [](const std::string& out) { return out.find("ready") != std::string::npos; },
      after(kMultinodeJobLimit)))
      << nodes[2]->output();
  kill(nodes[2]->pid(), SIGKILL);
  for (int rank = 0; rank < 2; ++rank) {
    std::optional<ExitStatus> status = nodes[rank]->waitForExit(after(kMultinodeJobLimit));
    const std::string& out = nodes[rank]->output();
    ASSERT_TRUE(status && status->success()) << out;
    EXPECT_NE(out.find("round 0 world 3"), std::string::npos) << out;
    EXPECT_NE(out.find("round 1 world 2"), std::string::npos) << out;
    EXPECT_NE(out.find("of 2 (elastic 2:3) (workers per node 1,1, world size 2)"),
              std::string::npos)
        << out;
  }
}

// The pids of `launcher`'s children running the launch worker (its orphan
// guard, a fork of the launcher, has the worker only among its arguments).
std::vector<pid_t> workersOf(pid_t launcher) {
  std::vector<pid_t> workers;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string command((std::istreambuf_iterator<char>(cmdline)), {});
    if (parent == launcher && command.rfind(LAUNCH_WORKER, 0) == 0)  // argv[0], not an argument
      workers.push_back(std::stoi(name));
  }
  return workers;
}

// A node that comes late to an elastic job (--nnodes 2:3) waits while the
// job runs on two, and joins when it re-forms: here after a worker of node
// 1 dies, so the next round has all three nodes.
TEST(MultiNode, ElasticJobTakesALateNodeInAtTheNextRound) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  std::vector<std::unique_ptr<testing::ChildProcess>> nodes;
  auto start = [&](int rank) {
    NodeFlags flags{rank, 1, 3, {"--max-restarts", "1", "--join-wait", "1"}, "2:3", "elastic"};
    nodes.push_back(startNode({}, flags, "127.0.0.1", port));
  };
  auto shows = [](const std::string& part) {
    return [part](const std::string& out) { return out.find(part) != std::string::npos; };
  };
  start(0);
  start(1);
  ASSERT_TRUE(nodes[0]->waitForOutput(shows("ready"), after(kMultinodeJobLimit)))
      << nodes[0]->output();
  start(2);
  ASSERT_TRUE(nodes[2]->waitForOutput(shows("it waits for the next"), after(kMultinodeJobLimit)))
      << nodes[2]->output();
  std::vector<pid_t> workers = workersOf(nodes[1]->pid());
  ASSERT_EQ(workers.size(), 1u) << nodes[1]->output();
  kill(workers.front(), SIGKILL);
  for (int rank = 0; rank < 3; ++rank) {
    std::optional<ExitStatus> status = nodes[rank]->waitForExit(after(kMultinodeJobLimit));
    const std::string& out = nodes[rank]->output();
    ASSERT_TRUE(status && status->success()) << "node " << rank << ":\n" << out;
    EXPECT_NE(out.find("round 1 world 3"), std::string::npos) << out;
    EXPECT_NE(out.find("sum 3"), std::string::npos) << out;
  }
  EXPECT_NE(nodes[0]->output().find("round 0 world 2"), std::string::npos) << nodes[0]->output();
  EXPECT_EQ(nodes[2]->output().find("round 0 world"), std::string::npos) << nodes[2]->output();
}

// A launcher asked to stop while it waits for the other nodes leaves at
// once, saying so, rather than when its wait times out (--timeout 20).
TEST(MultiNode, ALauncherWaitingForTheOtherNodesStopsAtOnceOnSigterm) {
  testing::ReservedPort reserved;
  auto alone = startNode({}, NodeFlags{0, 1, 2, {}}, "127.0.0.1", reserved.number());
  ASSERT_TRUE(alone->waitForOutput(
      [](const std::string& out) {
        return out.find("waiting for node(s) 1 of 2") != std::string::npos;
      },
      after(kMultinodeJobLimit)))
      << alone->output();
  kill(alone->pid(), SIGTERM);
  std::optional<ExitStatus> status = alone->waitForExit(after(std::chrono::seconds(8)));
  ASSERT_TRUE(status) << "still waiting 8 s after SIGTERM:\n" << alone->output();
  EXPECT_EQ(status->code, 128 + SIGTERM) << alone->output();
  EXPECT_NE(alone->output().find("node 0 stopped by signal 15 while it joined a round of the job"),
            std::string::npos)
      << alone->output();
}

// Launchers that disagree on what they must share are refused before any
// worker starts, both of them, naming both sides. 30 s: the refusal comes
// when node 0 reads the second claim, far before --timeout (20 s) ends.
void expectBothRefused(const NodeFlags& node0, const NodeFlags& node1, const std::string& why) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  auto first = startNode({}, node0, "127.0.0.1", port);
  auto second = startNode({}, node1, "127.0.0.1", port);
  for (ChildProcess* node : {first.get(), second.get()}) {
    std::optional<ExitStatus> status = node->waitForExit(after(std::chrono::seconds(30)));
    ASSERT_TRUE(status) << "a launcher was not refused within 30 s:\n" << node->output();
    EXPECT_EQ(status->code, 2) << node->output();
    EXPECT_NE(node->output().find(why), std::string::npos) << node->output();
    EXPECT_EQ(node->output().find("[rank "), std::string::npos) << "a worker started:\n"
                                                                << node->output();
  }
}

TEST(MultiNode, LaunchersWithDifferentNodeCountsAreRefused) {
  NodeFlags node0{0, 2, 2, {}}, node1{1, 1, 3, {}};
  expectBothRefused(node0, node1, "the launchers disagree on --nnodes: node 0 (");
  expectBothRefused(node0, node1, "has --nnodes 2, node 1 (");
}

TEST(MultiNode, LaunchersWithDifferentRestartBudgetsAreRefused) {
  NodeFlags node0{0, 1, 2, {"--max-restarts", "1"}}, node1{1, 1, 2, {"--max-restarts", "2"}};
  expectBothRefused(node0, node1, "disagree on --max-restarts");
}

// Two launchers claim node rank 1: whichever claims second is refused by
// name; the job either runs with the first or, when both claims arrived
// before node 0 decided, is refused as a whole. Nobody waits for a timeout.
TEST(MultiNode, TwoLaunchersWithOneNodeRankAreRefused) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  auto first = startNode({}, NodeFlags{0, 1, 2, {}}, "127.0.0.1", port);
  auto second = startNode({}, NodeFlags{1, 1, 2, {}}, "127.0.0.1", port);
  auto third = startNode({}, NodeFlags{1, 1, 2, {}}, "127.0.0.1", port);
  int refused = 0;
  std::string outputs;
  for (ChildProcess* node : {first.get(), second.get(), third.get()}) {
    std::optional<ExitStatus> status = node->waitForExit(after(std::chrono::seconds(60)));
    ASSERT_TRUE(status) << "a launcher still ran after 60 s:\n" << node->output();
    outputs += node->output();
    if (status->code == 2) {
      ++refused;
      EXPECT_NE(node->output().find("--node-rank 1"), std::string::npos) << node->output();
    }
  }
  EXPECT_GE(refused, 1) << outputs;
}

bool run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

TEST(MultiNode, TwoHostsInNetworkNamespaces) {
  if (geteuid() != 0 || !run("command -v ip")) GTEST_SKIP() << "needs root and iproute2";
  std::string suffix = std::to_string(getpid() % 100000);
  std::string a = "strata-a" + suffix, b = "strata-b" + suffix;
  std::string vethA = "sva" + suffix, vethB = "svb" + suffix;
  bool made = run("ip netns add " + a) && run("ip netns add " + b) &&
              run("ip link add " + vethA + " type veth peer name " + vethB) &&
              run("ip link set " + vethA + " netns " + a) &&
              run("ip link set " + vethB + " netns " + b) &&
              run("ip -n " + a + " addr add 10.231.7.1/24 dev " + vethA) &&
              run("ip -n " + b + " addr add 10.231.7.2/24 dev " + vethB) &&
              run("ip -n " + a + " link set " + vethA + " up") &&
              run("ip -n " + b + " link set " + vethB + " up") &&
              run("ip -n " + a + " link set lo up") && run("ip -n " + b + " link set lo up");
  bool ok = false;
  std::string output;
  if (made) {
    int port = 29500;  // inside the namespaces, which nothing else uses
    auto first = startNode({"ip", "netns", "exec", a}, 0, "10.231.7.1", port, {});
    auto second = startNode({"ip", "netns", "exec", b}, 1, "10.231.7.1", port, {});
    output = finish(*first, *second, &ok);
  }
  run("ip netns del " + a);
  run("ip netns del " + b);
  if (!made) GTEST_SKIP() << "could not create network namespaces here";
  EXPECT_TRUE(ok) << output;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(output.find("[rank " + std::to_string(rank) + "] sum 4"), std::string::npos)
        << output;
  }
}

// A node whose launcher holds another job token, or none, is refused at the
// rendezvous: its launcher exits 2 naming the mismatch before starting a
// worker. The refusal comes as soon as node 0's store answers, so it must not
// wait for --timeout (120 s here); 30 s covers two launchers starting on a
// loaded machine.
void expectSecondNodeRefused(const std::vector<std::string>& secondNodeToken,
                             const std::string& why) {
  unsetenv("STRATA_JOB_TOKEN");  // the token comes from the flags alone
  testing::ReservedPort reserved;
  int port = reserved.number();
  auto first = startNode({}, 0, "127.0.0.1", port, {"--job-token", "alpha"});
  std::vector<std::string> flags = {"--timeout", "120"};
  flags.insert(flags.end(), secondNodeToken.begin(), secondNodeToken.end());
  auto second = startNode({}, 1, "127.0.0.1", port, flags);
  std::optional<ExitStatus> status = second->waitForExit(after(std::chrono::seconds(30)));
  ASSERT_TRUE(status) << "node 1 not refused within 30 s:\n" << second->output();
  EXPECT_EQ(status->code, 2) << second->output();
  EXPECT_NE(second->output().find("node 1 cannot join the job at 127.0.0.1:" +
                                  std::to_string(port) + ": refused by the job"),
            std::string::npos)
      << second->output();
  EXPECT_NE(second->output().find(why), std::string::npos) << second->output();
  EXPECT_EQ(second->output().find("[rank "), std::string::npos) << "a worker started:\n"
                                                                << second->output();
}

TEST(MultiNode, SecondNodeWithAnotherTokenIsRefused) {
  expectSecondNodeRefused({"--job-token", "beta"}, "job token does not match the job's");
}

TEST(MultiNode, SecondNodeWithoutTheTokenIsRefused) {
  expectSecondNodeRefused({}, "it requires a job token and this process has none");
}

}  // namespace
}  // namespace strata

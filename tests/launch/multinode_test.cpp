// Two launchers as two nodes: on loopback, and on two network namespaces
// joined by a veth pair, each with its own address (the second needs root and
// iproute2; it is skipped without them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "strata/util/subprocess.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

struct Node {
  pid_t pid = -1;
  std::string log;
};

Node startNode(std::vector<std::string> prefix, int nodeRank, const std::string& addr, int port) {
  Node node;
  node.log = "/tmp/strata-multinode-" + std::to_string(getpid()) + "-" + std::to_string(nodeRank);
  int fd = open(node.log.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  SpawnSpec spec;
  spec.argv = std::move(prefix);
  spec.argv.insert(spec.argv.end(),
                   {STRATA_BINARY, "launch", "--nproc-per-node", "2", "--nnodes", "2",
                    "--node-rank", std::to_string(nodeRank), "--master-addr", addr, "--master-port",
                    std::to_string(port), "--timeout", "20", "--", LAUNCH_WORKER, "ok"});
  spec.stdoutFd = fd;
  spec.stderrFd = fd;
  node.pid = spawnProcess(spec);
  close(fd);
  return node;
}

// Waits for both nodes (at most 60 s) and returns their combined output.
std::string finish(std::vector<Node> nodes, bool* allSucceeded) {
  *allSucceeded = true;
  auto deadline = Clock::now() + std::chrono::seconds(60);
  std::string output;
  for (Node& node : nodes) {
    std::optional<ExitStatus> status;
    while (!(status = pollExit(node.pid)) && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!status) {
      kill(node.pid, SIGKILL);
      status = waitExit(node.pid);
    }
    *allSucceeded = *allSucceeded && status->success();
    std::ifstream in(node.log);
    std::stringstream text;
    text << in.rdbuf();
    output += text.str();
    std::remove(node.log.c_str());
  }
  return output;
}

int freshPort() { return 20000 + (getpid() * 7) % 20000; }

TEST(MultiNode, TwoLaunchersOnLoopbackFormOneJob) {
  int port = freshPort();
  bool ok = false;
  std::string output =
      finish({startNode({}, 0, "127.0.0.1", port), startNode({}, 1, "127.0.0.1", port)}, &ok);
  EXPECT_TRUE(ok) << output;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(output.find("[rank " + std::to_string(rank) + "] sum 4"), std::string::npos)
        << output;
  }
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
    int port = freshPort();
    output = finish({startNode({"ip", "netns", "exec", a}, 0, "10.231.7.1", port),
                     startNode({"ip", "netns", "exec", b}, 1, "10.231.7.1", port)},
                    &ok);
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

}  // namespace
}  // namespace strata

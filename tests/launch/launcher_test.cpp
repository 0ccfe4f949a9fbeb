// The launcher end to end: real `strata launch` processes supervising real
// workers, including workers that fail on purpose.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "strata/util/subprocess.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

struct LaunchResult {
  ExitStatus exit;
  std::string output;
  double seconds = 0;
};

// Runs `strata launch ARGS -- worker MODE` and waits at most `limit`.
LaunchResult launch(std::vector<std::string> args, const std::string& mode,
                    std::map<std::string, std::string> env = {},
                    std::chrono::seconds limit = std::chrono::seconds(60),
                    std::function<void(pid_t)> whileRunning = {}) {
  std::string log = "/tmp/strata-launch-test-" + std::to_string(getpid()) + ".log";
  int fd = open(log.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  SpawnSpec spec;
  spec.argv = {STRATA_BINARY, "launch"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.argv.insert(spec.argv.end(), {"--", LAUNCH_WORKER, mode});
  spec.setEnv = std::move(env);
  spec.stdoutFd = fd;
  spec.stderrFd = fd;
  auto start = Clock::now();
  pid_t pid = spawnProcess(spec);
  close(fd);
  if (whileRunning) whileRunning(pid);
  LaunchResult result;
  for (;;) {
    if (auto status = pollExit(pid)) {
      result.exit = *status;
      break;
    }
    if (Clock::now() - start > limit) {
      kill(pid, SIGKILL);
      result.exit = waitExit(pid);
      ADD_FAILURE() << "strata launch still ran after " << limit.count() << " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  result.output = text.str();
  std::remove(log.c_str());
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Launcher, RunsWorkersWithRankPrefixes) {
  LaunchResult r = launch({"--nproc-per-node", "3"}, "ok");
  EXPECT_TRUE(r.exit.success()) << r.output;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_TRUE(contains(r.output, "[rank " + std::to_string(rank) + "] sum 3")) << r.output;
  }
}

TEST(Launcher, WorkerThatExitsNonZeroEndsTheJobNamingIt) {
  LaunchResult r =
      launch({"--nproc-per-node", "3", "--timeout", "20"}, "exit", {{"FAIL_RANK", "1"}});
  EXPECT_EQ(r.exit.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 1 (local rank 1) failed with exit code 3")) << r.output;
  EXPECT_TRUE(contains(r.output, "| worker gives up on purpose")) << r.output;
  EXPECT_LT(r.seconds, 15);
}

TEST(Launcher, WorkerKilledBySignalEndsTheJobNamingIt) {
  LaunchResult r =
      launch({"--nproc-per-node", "3", "--timeout", "20"}, "sigkill", {{"FAIL_RANK", "2"}});
  EXPECT_EQ(r.exit.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 2 (local rank 2) failed with signal 9")) << r.output;
  EXPECT_LT(r.seconds, 15);
}

TEST(Launcher, StalledWorkerIsCaughtByPeerTimeoutsAndNamed) {
  LaunchResult r =
      launch({"--nproc-per-node", "2", "--timeout", "3"}, "stall", {{"FAIL_RANK", "1"}});
  EXPECT_EQ(r.exit.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 0 (local rank 0) failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "timed out")) << r.output;
  EXPECT_TRUE(contains(r.output, "likely stalled: rank 1 (stopped by a signal)")) << r.output;
  EXPECT_LT(r.seconds, 20);
}

TEST(Launcher, RestartsTheWholeGroupAndWorkersSeeTheAttempt) {
  LaunchResult r =
      launch({"--nproc-per-node", "2", "--max-restarts", "2"}, "attempt", {{"FAIL_RANK", "0"}});
  EXPECT_TRUE(r.exit.success()) << r.output;
  EXPECT_TRUE(contains(r.output, "restarting all workers (restart 1 of 2)")) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 1] attempt 1")) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 1] sum 2")) << r.output;
}

TEST(Launcher, GivesUpWhenRestartsRunOut) {
  LaunchResult r = launch({"--nproc-per-node", "2", "--max-restarts", "1", "--timeout", "10"},
                          "exit", {{"FAIL_RANK", "0"}});
  EXPECT_EQ(r.exit.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "giving up after 1 restarts")) << r.output;
}

TEST(Launcher, ForwardsSigtermAndStopsWorkers) {
  LaunchResult r =
      launch({"--nproc-per-node", "2"}, "sleep", {}, std::chrono::seconds(30), [](pid_t launcher) {
        std::this_thread::sleep_for(std::chrono::seconds(3));
        kill(launcher, SIGTERM);
      });
  EXPECT_EQ(r.exit.code, 128 + SIGTERM) << r.output;
  EXPECT_TRUE(contains(r.output, "stopped all workers after signal 15")) << r.output;
  EXPECT_LT(r.seconds, 12);
}

TEST(Launcher, JobTokenReachesWorkers) {
  LaunchResult r = launch({"--nproc-per-node", "2", "--job-token", "abc"}, "ok");
  EXPECT_TRUE(r.exit.success()) << r.output;
}

TEST(Launcher, PortInUseIsAClearError) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  std::string port = std::to_string(ntohs(addr.sin_port));
  LaunchResult r = launch({"--nproc-per-node", "2", "--master-port", port}, "ok");
  close(fd);
  EXPECT_EQ(r.exit.code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "port " + port + " on 127.0.0.1 is already in use")) << r.output;
}

TEST(Launcher, BadFlagsAreClearErrors) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--nproc-per-node", "0"}, "--nproc-per-node must be at least 1, got 0"},
           {{"--nproc-per-node", "two"}, "--nproc-per-node expects an integer, got 'two'"},
           {{"--nnodes", "2", "--node-rank", "2", "--master-port", "1234"},
            "--node-rank 2 is outside [0, --nnodes 2)"},
           {{"--nnodes", "2"}, "needs an explicit --master-port"},
           {{"--frobnicate"}, "unknown flag '--frobnicate'"},
           {{"--timeout", "-1"}, "--timeout must be a positive number"},
       }) {
    LaunchResult r = launch(c.args, "ok");
    EXPECT_EQ(r.exit.code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, c.message)) << r.output;
  }
}

}  // namespace
}  // namespace strata

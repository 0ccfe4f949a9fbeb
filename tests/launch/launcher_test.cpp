// The launcher end to end: real `strata launch` processes supervising real
// workers, including workers that fail on purpose.
//
// Time bounds are generous multiples of the launcher's promises, so they hold
// on a loaded two-core machine next to other multi-process tests. Where a
// test passes --timeout 120, a launcher that only ended because the workers'
// own timeouts fired would fail its bound.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>

#include "child_process.h"
#include "strata/util/subprocess.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
using testing::after;
using testing::ChildProcess;
using testing::ProcessWatch;

// Loading LibTorch and meeting at the rendezvous, for every worker of a job,
// on a loaded machine: far above the usual second or two.
constexpr std::chrono::seconds kStartLimit{60};
// The launcher stops every worker within kStopGrace (3 s) of a signal, and a
// worker dies with its launcher at once; 30 s absorbs a loaded machine.
constexpr std::chrono::seconds kTeardownLimit{30};

struct LaunchResult {
  ExitStatus exit;
  std::string output;
  double seconds = 0;
};

SpawnSpec launchSpec(const std::vector<std::string>& args, const std::vector<std::string>& command,
                     std::map<std::string, std::string> env = {}) {
  SpawnSpec spec;
  spec.argv = {STRATA_BINARY, "launch"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), command.begin(), command.end());
  spec.setEnv = std::move(env);
  return spec;
}

// Runs `strata launch ARGS -- worker MODE` and waits at most `limit`.
LaunchResult launch(const std::vector<std::string>& args, const std::string& mode,
                    std::map<std::string, std::string> env = {},
                    std::chrono::seconds limit = std::chrono::seconds(60)) {
  auto start = Clock::now();
  ChildProcess launcher(launchSpec(args, {LAUNCH_WORKER, mode}, std::move(env)));
  std::optional<ExitStatus> status = launcher.waitForExit(after(limit));
  LaunchResult result;
  if (status) {
    result.exit = *status;
  } else {
    ADD_FAILURE() << "strata launch still ran after " << limit.count() << " s";
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.output = launcher.output();
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct ReadyWorker {
  pid_t pid = -1;
  pid_t parent = -1;
};

// The "[rank N] ready pid P ppid Q" lines of workers in "sleep" mode.
std::vector<ReadyWorker> readyWorkers(const std::string& output) {
  static const std::regex line(R"(\[rank \d+\] ready pid (\d+) ppid (\d+))");
  std::vector<ReadyWorker> workers;
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) {
    workers.push_back({std::stoi((*it)[1]), std::stoi((*it)[2])});
  }
  return workers;
}

std::vector<pid_t> pidsOf(const std::vector<ReadyWorker>& workers) {
  std::vector<pid_t> pids;
  for (const ReadyWorker& w : workers) pids.push_back(w.pid);
  return pids;
}

// Waits (at most kStartLimit) until all `count` workers of a "sleep" job are
// past their barrier.
bool waitUntilReady(ChildProcess& launcher, size_t count) {
  return launcher.waitForOutput(
      [count](const std::string& output) { return readyWorkers(output).size() == count; },
      after(kStartLimit));
}

TEST(Launcher, RunsWorkersWithRankPrefixes) {
  LaunchResult r = launch({"--nproc-per-node", "3"}, "ok");
  EXPECT_TRUE(r.exit.success()) << r.output;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_TRUE(contains(r.output, "[rank " + std::to_string(rank) + "] sum 3")) << r.output;
  }
}

// torchrun's spelling, and its way of naming the worker: the first argument
// that is not a flag, no `--` needed.
TEST(Launcher, TakesTorchrunsCommandLine) {
  SpawnSpec spec;
  spec.argv = {STRATA_BINARY, "launch", "--nproc_per_node", "2", "--node_rank", "0",
               "--nnodes",    "1",      "--max_restarts",   "0", LAUNCH_WORKER, "ok"};
  ChildProcess launcher(spec);
  std::optional<ExitStatus> status = launcher.waitForExit(after(std::chrono::seconds(60)));
  ASSERT_TRUE(status) << launcher.output();
  EXPECT_TRUE(status->success()) << launcher.output();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(contains(launcher.output(), "[rank " + std::to_string(rank) + "] sum 2"))
        << launcher.output();
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

// The flight recorder's diagnosis: rank 1 stopped after the first barrier of
// the world group, so rank 0 waits alone in the all-reduce after it; the
// files stay in --flight-dir, and `strata debug flight` reads them again.
TEST(Launcher, FlightRecordsNameTheRankThatNeverEnteredTheCollective) {
  std::string dir = ::testing::TempDir() + "strata_flight_" + std::to_string(getpid());
  LaunchResult r = launch({"--nproc-per-node", "2", "--timeout", "3", "--flight-dir", dir}, "stall",
                          {{"FAIL_RANK", "1"}});
  EXPECT_EQ(r.exit.code, 1) << r.output;
  const std::string expected =
      "world: rank 0 entered all-reduce #2 and did not complete it (timed out); rank 1 never "
      "entered it (last completed #1; its last operation, barrier of world #1, completed)";
  EXPECT_TRUE(contains(r.output, expected)) << r.output;
  EXPECT_TRUE(contains(r.output, "the records are in " + dir + "/attempt-0")) << r.output;
  SpawnSpec flightDebug;
  flightDebug.argv = {STRATA_BINARY, "debug", "flight", dir + "/attempt-0"};
  ChildProcess debug(flightDebug);
  std::optional<ExitStatus> status = debug.waitForExit(after(std::chrono::seconds(30)));
  ASSERT_TRUE(status && status->success()) << debug.output();
  EXPECT_TRUE(contains(debug.output(), expected)) << debug.output();
  std::filesystem::remove_all(dir);
}

// Without --flight-dir the records go to a fresh folder under $TMPDIR,
// removed when the job succeeds.
TEST(Launcher, AnUnnamedFlightFolderGoesAwayAfterASuccess) {
  std::string tmp = ::testing::TempDir() + "strata_tmpdir_" + std::to_string(getpid());
  std::filesystem::create_directories(tmp);
  LaunchResult r = launch({"--nproc-per-node", "2"}, "ok", {{"TMPDIR", tmp}});
  EXPECT_TRUE(r.exit.success()) << r.output;
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "left behind in " << tmp;
  std::filesystem::remove_all(tmp);
}

TEST(Launcher, RestartsTheWholeGroupAndWorkersSeeTheAttempt) {
  LaunchResult r =
      launch({"--nproc-per-node", "2", "--max-restarts", "2"}, "attempt", {{"FAIL_RANK", "0"}});
  EXPECT_TRUE(r.exit.success()) << r.output;
  EXPECT_TRUE(contains(r.output, "restarting all workers (restart 1 of 2)")) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 1] attempt 1")) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 1] sum 2")) << r.output;
}

// Each failed attempt is torn down within about 5 s of the failure (docs/cli.md)
// and the launcher gives up right after the last one, naming the cause.
// Three attempts with start-ups on a loaded machine stay well inside 90 s.
TEST(Launcher, GivesUpWhenRestartsRunOutNamingTheFailedRank) {
  LaunchResult r = launch({"--nproc-per-node", "2", "--max-restarts", "2", "--timeout", "120"},
                          "exit", {{"FAIL_RANK", "1"}}, std::chrono::seconds(100));
  EXPECT_EQ(r.exit.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "restarting all workers (restart 2 of 2)")) << r.output;
  EXPECT_FALSE(contains(r.output, "restart 3")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "giving up after 2 restarts; in the last attempt rank 1 (local rank 1) "
                       "failed with exit code 3"))
      << r.output;
  EXPECT_LT(r.seconds, 90) << r.output;
}

TEST(Launcher, ForwardsSigtermAndStopsWorkers) {
  ChildProcess launcher(
      launchSpec({"--nproc-per-node", "2", "--timeout", "120"}, {LAUNCH_WORKER, "sleep"}));
  ASSERT_TRUE(waitUntilReady(launcher, 2)) << "not ready:\n" << launcher.output();
  ProcessWatch workers(pidsOf(readyWorkers(launcher.output())));
  kill(launcher.pid(), SIGTERM);
  std::optional<ExitStatus> status = launcher.waitForExit(after(kTeardownLimit));
  ASSERT_TRUE(status) << "no exit " << kTeardownLimit.count() << " s after SIGTERM:\n"
                      << launcher.output();
  EXPECT_EQ(status->code, 128 + SIGTERM) << launcher.output();
  EXPECT_TRUE(contains(launcher.output(), "stopped all workers after signal 15"))
      << launcher.output();
  EXPECT_TRUE(workers.waitUntilGone(after(kTeardownLimit)).empty()) << launcher.output();
}

// SIGKILL leaves the launcher no chance to stop anyone: its workers must
// still die with it rather than live on as orphans.
void expectWorkersDieWithKilledLauncher(const std::vector<std::string>& command,
                                        bool throughWrapper) {
  ChildProcess launcher(launchSpec({"--nproc-per-node", "2", "--timeout", "120"}, command));
  ASSERT_TRUE(waitUntilReady(launcher, 2)) << "not ready:\n" << launcher.output();
  std::vector<ReadyWorker> ready = readyWorkers(launcher.output());
  for (const ReadyWorker& w : ready) {
    EXPECT_EQ(w.parent != launcher.pid(), throughWrapper) << launcher.output();
  }
  ProcessWatch workers(pidsOf(ready));
  kill(launcher.pid(), SIGKILL);
  ASSERT_TRUE(launcher.waitForExit(after(kTeardownLimit)));
  std::vector<pid_t> orphans = workers.waitUntilGone(after(kTeardownLimit));
  EXPECT_TRUE(orphans.empty()) << orphans.size() << " workers outlived their launcher by "
                               << kTeardownLimit.count() << " s:\n"
                               << launcher.output();
}

TEST(Launcher, WorkersDieWhenTheLauncherIsKilled) {
  expectWorkersDieWithKilledLauncher({LAUNCH_WORKER, "sleep"}, /*throughWrapper=*/false);
}

TEST(Launcher, WorkersBehindAShellWrapperDieWhenTheLauncherIsKilled) {
  // The command after the worker keeps the shell from exec'ing it, so the
  // worker is the launcher's grandchild.
  expectWorkersDieWithKilledLauncher({"sh", "-c", std::string(LAUNCH_WORKER) + " sleep; exit $?"},
                                     /*throughWrapper=*/true);
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
           {{"--rdzv-endpoint", "node0"}, "--rdzv-endpoint expects HOST:PORT"},
           {{"--timeout", "-1"}, "--timeout must be a positive number"},
       }) {
    LaunchResult r = launch(c.args, "ok");
    EXPECT_EQ(r.exit.code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, c.message)) << r.output;
  }
}

}  // namespace
}  // namespace strata

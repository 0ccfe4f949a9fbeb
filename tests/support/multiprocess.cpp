#include "multiprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace strata::testing {
namespace {

constexpr char kChildCallVar[] = "STRATA_TEST_CHILD_CALL";
constexpr char kChildRankVar[] = "STRATA_TEST_CHILD_RANK";
// A file the child creates as it enters the body; its absence after a
// successful exit means the body never ran.
constexpr char kChildMarkerVar[] = "STRATA_TEST_CHILD_MARKER";

std::string currentTestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

// Counts runInProcesses calls within the current test, so a test that calls
// it several times runs the right body in each child.
int nextCallIndex() {
  static std::string test;
  static int calls = 0;
  if (test != currentTestName()) {
    test = currentTestName();
    calls = 0;
  }
  return calls++;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

[[noreturn]] void runChild(int rank, int worldSize,
                           const std::function<void(const RankContext&)>& body) {
  if (const char* marker = std::getenv(kChildMarkerVar)) std::ofstream(marker).put('1');
  try {
    body(RankContext{rank, worldSize});
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank " << rank << " threw: " << e.what();
  }
  bool failed = ::testing::Test::HasFailure();
  std::fflush(stdout);
  std::fflush(stderr);
  // _exit: the parent reads our exit code; static destructors of LibTorch's
  // thread pools have nothing left to do.
  _exit(failed ? 1 : 0);
}

}  // namespace

ReservedPort::ReservedPort() : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  int on = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw std::runtime_error("cannot reserve a loopback port: " + std::string(strerror(errno)));
  socklen_t length = sizeof(addr);
  getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length);
  port_ = ntohs(addr.sin_port);
}

ReservedPort::~ReservedPort() { close(fd_); }

bool inRankProcess() { return std::getenv(kChildCallVar) != nullptr; }

std::vector<RankResult> runInProcessesRaw(int worldSize,
                                          const std::function<void(const RankContext&)>& body,
                                          const MultiProcessOptions& options) {
  int call = nextCallIndex();
  if (const char* childCall = std::getenv(kChildCallVar)) {
    if (std::atoi(childCall) != call) return {};
    runChild(std::atoi(std::getenv(kChildRankVar)), worldSize, body);
  }

  ReservedPort port;
  std::string logPrefix =
      "/tmp/strata-test-" + std::to_string(getpid()) + "-" + std::to_string(call) + "-rank";
  std::vector<pid_t> pids(worldSize);
  std::vector<RankResult> results(worldSize);
  std::vector<bool> running(worldSize, true);
  for (int rank = 0; rank < worldSize; ++rank) {
    SpawnSpec spec;
    spec.argv = {currentExecutable(), "--gtest_filter=" + currentTestName()};
    spec.setEnv = options.env;
    if (options.rankEnv) {
      for (auto& [key, value] : options.rankEnv(rank)) spec.setEnv[key] = value;
    }
    spec.setEnv[kChildCallVar] = std::to_string(call);
    spec.setEnv[kChildRankVar] = std::to_string(rank);
    spec.setEnv["RANK"] = std::to_string(rank);
    spec.setEnv["WORLD_SIZE"] = std::to_string(worldSize);
    spec.setEnv["LOCAL_RANK"] = std::to_string(rank);
    spec.setEnv["LOCAL_WORLD_SIZE"] = std::to_string(worldSize);
    spec.setEnv["MASTER_ADDR"] = "127.0.0.1";
    spec.setEnv["MASTER_PORT"] = std::to_string(port.number());
    spec.setEnv[kChildMarkerVar] = logPrefix + std::to_string(rank) + ".ran";
    std::remove(spec.setEnv[kChildMarkerVar].c_str());
    spec.setEnv["STRATA_TIMEOUT"] = std::to_string(options.commTimeoutSeconds);
    spec.setEnv["OMP_NUM_THREADS"] = "1";
    int fd = open((logPrefix + std::to_string(rank)).c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    spec.stdoutFd = fd;
    spec.stderrFd = fd;
    pids[rank] = spawnProcess(spec);
    close(fd);
  }

  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int left = worldSize;
  bool killed = false;
  while (left > 0) {
    for (int rank = 0; rank < worldSize; ++rank) {
      if (!running[rank]) continue;
      if (auto status = pollExit(pids[rank])) {
        running[rank] = false;
        results[rank].exit = *status;
        --left;
        if (!status->success() && options.killOthersOnFailure && !killed) {
          for (int other = 0; other < worldSize; ++other) {
            if (running[other]) kill(pids[other], SIGKILL);
          }
          killed = true;
        }
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (int rank = 0; rank < worldSize; ++rank) {
        if (!running[rank]) continue;
        kill(pids[rank], SIGKILL);
        results[rank].exit = waitExit(pids[rank]);
        results[rank].timedOut = true;
        running[rank] = false;
      }
      left = 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int rank = 0; rank < worldSize; ++rank) {
    std::string path = logPrefix + std::to_string(rank);
    results[rank].output = readFile(path);
    std::remove(path.c_str());
    std::string marker = path + ".ran";
    results[rank].ranBody = std::ifstream(marker).good();
    std::remove(marker.c_str());
  }
  return results;
}

void runInProcesses(int worldSize, const std::function<void(const RankContext&)>& body,
                    const MultiProcessOptions& options) {
  std::vector<RankResult> results = runInProcessesRaw(worldSize, body, options);
  for (size_t rank = 0; rank < results.size(); ++rank) {
    const RankResult& r = results[rank];
    if (r.timedOut) {
      ADD_FAILURE() << "rank " << rank << " of " << worldSize << " still ran after "
                    << options.timeout.count() << " s and was killed; its output:\n"
                    << r.output;
    } else if (!r.exit.success()) {
      ADD_FAILURE() << "rank " << rank << " of " << worldSize << " ended with " << r.exit.describe()
                    << "; its output:\n"
                    << r.output;
    } else if (!r.ranBody) {
      ADD_FAILURE() << "rank " << rank << " of " << worldSize
                    << " exited without running the test body (did its --gtest_filter match "
                       "this test?); its output:\n"
                    << r.output;
    }
  }
}

std::vector<int> allRanks(int worldSize) {
  std::vector<int> ranks(worldSize);
  for (int r = 0; r < worldSize; ++r) ranks[r] = r;
  return ranks;
}

}  // namespace strata::testing

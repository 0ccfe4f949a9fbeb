#include "round_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "strata/util/subprocess.h"

namespace strata::bench {
namespace {

constexpr char kRound = 'r';

// Exact text for a double, so the parent reads back the child's value.
std::string exactText(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

void sendAll(int channel, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(channel, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("bench round channel: send failed");
    sent += static_cast<size_t>(n);
  }
}

std::vector<double> parseNumbers(const std::string& line) {
  std::istringstream in(line);
  std::vector<double> numbers;
  for (double value; in >> value;) numbers.push_back(value);
  if (!in.eof() || numbers.empty()) throw std::invalid_argument(line);
  return numbers;
}

}  // namespace

RoundProcess::RoundProcess(std::string side, std::vector<std::string> argv,
                           std::chrono::seconds timeout)
    : side_(std::move(side)), timeout_(timeout) {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0)
    throw std::runtime_error("bench side " + side_ + ": cannot create its socket pair");
  // Ours closes on exec (a second side's child must not hold it open); the
  // child's end stays open across its exec.
  channel_ = ends[0];
  fcntl(channel_, F_SETFD, FD_CLOEXEC);
  argv.push_back("--channel");
  argv.push_back(std::to_string(ends[1]));
  SpawnSpec spec;
  spec.argv = std::move(argv);
  spec.stdoutFd = STDERR_FILENO;  // the bench's stdout carries only its result lines
  try {
    pid_ = spawnProcess(spec);
  } catch (...) {
    close(ends[0]);
    close(ends[1]);
    throw;
  }
  close(ends[1]);
}

RoundProcess::~RoundProcess() {
  close(channel_);
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (!pollExit(pid_)) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitExit(pid_);
      return;
    }
    usleep(10000);
  }
}

std::vector<double> RoundProcess::round() {
  try {
    sendAll(channel_, std::string(1, kRound));
  } catch (const std::runtime_error&) {
    fail("it is no longer running");
  }
  std::string line = readLine();
  try {
    return parseNumbers(line);
  } catch (const std::invalid_argument&) {
    fail("it answered '" + line + "', not numbers");
  }
}

std::string RoundProcess::readLine() {
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  std::string line;
  char buffer[4096];
  while (line.empty() || line.back() != '\n') {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd wait{channel_, POLLIN, 0};
    int ready = left.count() > 0 ? poll(&wait, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      kill(pid_, SIGKILL);
      fail("it did not answer within " + std::to_string(timeout_.count()) + " s (killed)");
    }
    ssize_t n = recv(channel_, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("it ended before answering a round");
    line.append(buffer, static_cast<size_t>(n));
  }
  line.pop_back();
  return line;
}

void RoundProcess::fail(const std::string& why) {
  throw std::runtime_error("bench side " + side_ + ": " + why);
}

void serveRounds(int channel, const std::function<std::vector<double>()>& runRound) {
  char command = 0;
  while (true) {
    ssize_t n = recv(channel, &command, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return;  // the parent closed the channel: no more rounds
    if (n < 0 || command != kRound) throw std::runtime_error("bench round channel: bad command");
    std::string line;
    for (double value : runRound()) line += (line.empty() ? "" : " ") + exactText(value);
    sendAll(channel, line + "\n");
  }
}

}  // namespace strata::bench

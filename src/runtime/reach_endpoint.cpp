#include "reach_endpoint.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "strata/error.h"
#include "strata/runtime/timeouts.h"
#include "strata/util/log.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
using AddressList = std::unique_ptr<addrinfo, decltype(&freeaddrinfo)>;

constexpr std::chrono::milliseconds kConnectAttempt{1000};
constexpr std::chrono::milliseconds kFirstPause{100};
constexpr std::chrono::milliseconds kLongestPause{1000};

// Connects to one resolved address within kConnectAttempt; returns 0 or the errno.
int tryConnect(const addrinfo& address) {
  int fd = socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  address.ai_protocol);
  if (fd < 0) return errno;
  int error = 0;
  if (connect(fd, address.ai_addr, address.ai_addrlen) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd watch{fd, POLLOUT, 0};
      int ready = poll(&watch, 1, static_cast<int>(kConnectAttempt.count()));
      socklen_t length = sizeof error;
      if (ready <= 0) {
        error = ETIMEDOUT;
      } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
        error = errno;
      }
    }
  }
  close(fd);
  return error;
}

// One round: empty when host:port accepted a connection, else what stood in
// the way, in words.
std::string obstacle(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int status = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (status != 0) {
    return "the name '" + host + "' does not resolve yet (" + gai_strerror(status) + ")";
  }
  AddressList addresses(found, freeaddrinfo);
  int error = 0;
  for (addrinfo* a = addresses.get(); a; a = a->ai_next) {
    error = tryConnect(*a);
    if (error == 0) return "";
  }
  return "no connection yet (" + std::string(std::strerror(error)) + ")";
}

}  // namespace

void waitUntilReachable(const std::string& host, int port, std::chrono::milliseconds timeout,
                        const std::string& what) {
  std::string where = host + ":" + std::to_string(port);
  Clock::time_point start = Clock::now();
  Clock::time_point deadline = start + timeout;
  Clock::time_point nextReport = start + kProgressInterval;
  std::chrono::milliseconds pause = kFirstPause;
  for (;;) {
    std::string problem = obstacle(host, port);
    if (problem.empty()) return;
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      throw TimeoutError("could not reach " + what + " at " + where + " within " +
                         describeDuration(timeout) + ": " + problem);
    }
    if (now >= nextReport) {
      // Whole seconds: the line is for a person watching the log.
      auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - start);
      logMessage(LogLevel::Info, "waiting for " + what + " at " + where + ": " + problem + " (" +
                                     describeDuration(std::chrono::milliseconds(waited)) + " of " +
                                     describeDuration(timeout) + ")");
      nextReport = now + kProgressInterval;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    std::this_thread::sleep_for(std::min(pause, left));
    pause = std::min(pause * 2, kLongestPause);
  }
}

}  // namespace strata

#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace strata::testing {
namespace {

int openPidFd(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

int millisecondsUntil(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<long long>(0, left.count()));
}

}  // namespace

Deadline after(std::chrono::seconds seconds) { return std::chrono::steady_clock::now() + seconds; }

ChildProcess::ChildProcess(SpawnSpec spec) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  spec.stdoutFd = fds[1];
  spec.stderrFd = fds[1];
  pid_ = spawnProcess(spec);
  close(fds[1]);
  outFd_ = fds[0];
  pidFd_ = openPidFd(pid_);
  if (pidFd_ < 0) throw std::system_error(errno, std::generic_category(), "pidfd_open");
}

ChildProcess::~ChildProcess() {
  if (!exit_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitExit(pid_);
  }
  close(pidFd_);
  if (outFd_ >= 0) close(outFd_);
}

void ChildProcess::drain() {
  char buffer[8192];
  for (ssize_t n; outFd_ >= 0 && (n = read(outFd_, buffer, sizeof(buffer))) != 0;) {
    if (n > 0) {
      output_.append(buffer, static_cast<size_t>(n));
    } else if (errno != EINTR) {
      return;  // EAGAIN: nothing more for now
    }
  }
  if (outFd_ >= 0) close(outFd_);
  outFd_ = -1;  // EOF: every writer has closed the pipe
}

bool ChildProcess::readSome(Deadline deadline) {
  std::vector<pollfd> fds;
  if (outFd_ >= 0) fds.push_back({outFd_, POLLIN, 0});
  if (!exit_) fds.push_back({pidFd_, POLLIN, 0});
  if (fds.empty()) return false;  // nothing more can happen
  int ready = poll(fds.data(), fds.size(), millisecondsUntil(deadline));
  if (ready < 0 && errno == EINTR) return true;
  if (ready <= 0) return false;
  drain();
  if (!exit_ && (fds.back().revents & POLLIN)) {
    exit_ = waitExit(pid_);
    drain();
  }
  return true;
}

bool ChildProcess::waitForOutput(const std::function<bool(const std::string&)>& done,
                                 Deadline deadline) {
  while (!done(output_)) {
    if (!readSome(deadline)) return done(output_);
  }
  return true;
}

std::optional<ExitStatus> ChildProcess::waitForExit(Deadline deadline) {
  while (!exit_ && readSome(deadline)) {
  }
  return exit_;
}

std::optional<ExitStatus> runToEnd(std::vector<std::string> argv, Deadline deadline,
                                   std::string* output) {
  SpawnSpec spec;
  spec.argv = std::move(argv);
  ChildProcess child(spec);
  std::optional<ExitStatus> status = child.waitForExit(deadline);
  *output = child.output();
  return status;
}

int countOf(const std::string& text, const std::string& part) {
  int count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

ProcessWatch::ProcessWatch(const std::vector<pid_t>& pids) : pids_(pids) {
  for (pid_t pid : pids_) pidFds_.push_back(openPidFd(pid));  // -1 (ESRCH): already gone
}

ProcessWatch::~ProcessWatch() {
  for (int fd : pidFds_) {
    if (fd < 0) continue;
    syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
    close(fd);
  }
}

std::vector<pid_t> ProcessWatch::waitUntilGone(Deadline deadline) {
  for (;;) {
    std::vector<pollfd> fds;
    for (int fd : pidFds_) {
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    if (fds.empty()) return {};
    int ready = poll(fds.data(), fds.size(), millisecondsUntil(deadline));
    if (ready == 0 || (ready < 0 && errno != EINTR)) break;
    for (const pollfd& p : fds) {
      if (!(p.revents & POLLIN)) continue;
      for (int& fd : pidFds_) {
        if (fd != p.fd) continue;
        close(fd);
        fd = -1;
      }
    }
  }
  std::vector<pid_t> alive;
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pidFds_[i] >= 0) alive.push_back(pids_[i]);
  }
  return alive;
}

}  // namespace strata::testing

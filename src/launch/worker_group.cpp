#include "worker_group.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "strata/error.h"
#include "strata/launch/launcher.h"

namespace strata {
namespace {

// Read ends are non-blocking: a worker's own children may keep a pipe open
// after the worker exits, and draining must not wait for them.
void openPipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw SystemError("pipe", errno);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
}

void writeLine(bool isStderr, const std::string& line) {
  std::ostream& out = isStderr ? std::cerr : std::cout;
  out << line << '\n';
  out.flush();
}

}  // namespace

WorkerGroup::WorkerGroup(std::vector<WorkerSpec> specs, OrphanGuard& guard) : guard_(guard) {
  for (WorkerSpec& spec : specs) {
    int out[2], err[2];
    openPipe(out);
    openPipe(err);
    SpawnSpec spawn;
    spawn.argv = spec.command;
    spawn.setEnv = spec.env;
    spawn.stdoutFd = out[1];
    spawn.stderrFd = err[1];
    WorkerState state;
    state.pid = spawnProcess(spawn);
    guard_.watch(state.pid);
    close(out[1]);
    close(err[1]);
    state.stdoutFd = out[0];
    state.stderrFd = err[0];
    state.spec = std::move(spec);
    state.startedAt = std::chrono::steady_clock::now();
    workers_.push_back(std::move(state));
  }
}

WorkerGroup::~WorkerGroup() {
  killAll();
  for (WorkerState& w : workers_) {
    guard_.forget(w.pid);
    if (w.stdoutFd >= 0) close(w.stdoutFd);
    if (w.stderrFd >= 0) close(w.stderrFd);
  }
}

bool WorkerGroup::relay(WorkerState& w, int fd, std::string& partial, bool isStderr) {
  char buffer[8192];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n <= 0) {
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(fd);
      (isStderr ? w.stderrFd : w.stdoutFd) = -1;
    }
    return false;
  }
  partial.append(buffer, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t newline; (newline = partial.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    std::string line = partial.substr(start, newline - start);
    writeLine(isStderr, "[rank " + std::to_string(w.spec.globalRank) + "] " + line);
    if (isStderr) {
      w.lastStderr.push_back(line);
      if (w.lastStderr.size() > static_cast<size_t>(kStderrLinesKept)) w.lastStderr.pop_front();
    }
  }
  partial.erase(0, start);
  return true;
}

void WorkerGroup::flushPartial(WorkerState& w) {
  for (bool isStderr : {false, true}) {
    std::string& partial = isStderr ? w.stderrPartial : w.stdoutPartial;
    if (partial.empty()) continue;
    writeLine(isStderr, "[rank " + std::to_string(w.spec.globalRank) + "] " + partial);
    if (isStderr) w.lastStderr.push_back(partial);
    partial.clear();
  }
}

std::vector<int> WorkerGroup::pump(std::chrono::milliseconds wait) {
  std::vector<pollfd> fds;
  std::vector<std::pair<int, bool>> owners;  // worker index, is stderr
  for (size_t i = 0; i < workers_.size(); ++i) {
    for (bool isStderr : {false, true}) {
      int fd = isStderr ? workers_[i].stderrFd : workers_[i].stdoutFd;
      if (fd < 0) continue;
      fds.push_back({fd, POLLIN, 0});
      owners.emplace_back(static_cast<int>(i), isStderr);
    }
  }
  if (!fds.empty() && poll(fds.data(), fds.size(), static_cast<int>(wait.count())) > 0) {
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto [i, isStderr] = owners[k];
      WorkerState& w = workers_[i];
      relay(w, fds[k].fd, isStderr ? w.stderrPartial : w.stdoutPartial, isStderr);
    }
  } else if (fds.empty()) {
    usleep(static_cast<useconds_t>(wait.count() * 1000));
  }
  std::vector<int> ended;
  for (size_t i = 0; i < workers_.size(); ++i) {
    WorkerState& w = workers_[i];
    if (w.exit) continue;
    if (auto status = pollExit(w.pid)) {
      // Drain what the worker wrote before it ended, so its last words are kept.
      while (w.stderrFd >= 0 && relay(w, w.stderrFd, w.stderrPartial, true)) {
      }
      while (w.stdoutFd >= 0 && relay(w, w.stdoutFd, w.stdoutPartial, false)) {
      }
      flushPartial(w);
      w.exit = status;
      w.endedAt = std::chrono::steady_clock::now();
      ended.push_back(static_cast<int>(i));
    }
  }
  return ended;
}

bool WorkerGroup::anyRunning() const {
  for (const WorkerState& w : workers_) {
    if (!w.exit) return true;
  }
  return false;
}

void WorkerGroup::signalAll(int signal) {
  for (const WorkerState& w : workers_) {
    if (w.exit) continue;
    kill(-w.pid, signal);
    kill(w.pid, signal);
    // A stopped worker only acts on SIGTERM once it runs again.
    if (signal == SIGTERM) kill(-w.pid, SIGCONT);
  }
}

void WorkerGroup::killAll() {
  signalAll(SIGKILL);
  for (WorkerState& w : workers_) {
    if (w.exit) continue;
    w.exit = waitExit(w.pid);
    w.endedAt = std::chrono::steady_clock::now();
  }
}

bool WorkerGroup::isStopped(int index) const {
  std::ifstream stat("/proc/" + std::to_string(workers_[index].pid) + "/stat");
  std::string pid, name, state;
  stat >> pid >> name >> state;
  return state == "T" || state == "t";
}

}  // namespace strata

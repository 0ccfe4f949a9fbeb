// The workers of one node for one attempt: spawned together, their output
// relayed line by line with a rank prefix, reaped, and stopped together.
//
// Nothing here blocks for long: pump() waits at most `wait` for output.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orphan_guard.h"
#include "strata/util/subprocess.h"

namespace strata {

struct WorkerSpec {
  int globalRank = 0;
  int localRank = 0;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
};

struct WorkerState {
  WorkerSpec spec;
  pid_t pid = -1;
  int stdoutFd = -1;
  int stderrFd = -1;
  std::string stdoutPartial, stderrPartial;
  std::deque<std::string> lastStderr;  // the last kStderrLinesKept lines
  std::optional<ExitStatus> exit;
  std::chrono::steady_clock::time_point startedAt;
  std::chrono::steady_clock::time_point endedAt;
};

class WorkerGroup {
 public:
  // Each worker's process group is registered with `guard` while it runs.
  WorkerGroup(std::vector<WorkerSpec> specs, OrphanGuard& guard);
  ~WorkerGroup();

  // Relays output for up to `wait`, then reaps any workers that ended.
  // Returns the workers that ended during this call.
  std::vector<int> pump(std::chrono::milliseconds wait);
  bool anyRunning() const;
  // Sends `signal` to every running worker's process group.
  void signalAll(int signal);
  // SIGKILLs everyone still running and reaps them (bounded: SIGKILL cannot be ignored).
  void killAll();
  // Whether the kernel reports the worker as stopped (SIGSTOP, SIGTSTP, ptrace).
  bool isStopped(int index) const;

  const std::vector<WorkerState>& workers() const { return workers_; }

 private:
  // Relays one read's worth of output; false when nothing was there (or EOF).
  bool relay(WorkerState& w, int fd, std::string& partial, bool isStderr);
  void flushPartial(WorkerState& w);

  std::vector<WorkerState> workers_;
  OrphanGuard& guard_;
};

}  // namespace strata

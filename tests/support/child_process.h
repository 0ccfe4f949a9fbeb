// A child process whose stdout and stderr a test reads through one pipe.
//
// Every wait takes a deadline and is driven by poll() on the pipe and on a
// pidfd, never by sleeping: a test waits for the very line or exit it needs,
// and a child still running at the deadline fails the wait instead of hanging.
// The destructor SIGKILLs and reaps a child still running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "strata/util/subprocess.h"

namespace strata::testing {

using Deadline = std::chrono::steady_clock::time_point;

// A deadline `seconds` from now.
Deadline after(std::chrono::seconds seconds);

class ChildProcess {
 public:
  // Spawns spec with its stdout and stderr replaced by the pipe.
  explicit ChildProcess(SpawnSpec spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Everything read so far.
  const std::string& output() const { return output_; }

  // Reads until done(output()) holds (true) or the deadline passes (false).
  bool waitForOutput(const std::function<bool(const std::string&)>& done, Deadline deadline);
  // Reads until the child exits and returns its status, or nullopt at the
  // deadline. Output still buffered in the pipe when it exits is read too.
  std::optional<ExitStatus> waitForExit(Deadline deadline);

 private:
  // Waits for the pipe or the child, at most until the deadline; false past it.
  bool readSome(Deadline deadline);
  void drain();

  pid_t pid_ = -1;
  int pidFd_ = -1;
  int outFd_ = -1;
  std::optional<ExitStatus> exit_;
  std::string output_;
};

// Runs argv to its end (at most until the deadline) and returns its status
// and output; a child still running at the deadline is killed and yields nullopt.
std::optional<ExitStatus> runToEnd(std::vector<std::string> argv, Deadline deadline,
                                   std::string* output);

// How many times `line` occurs in `text`.
int countOf(const std::string& text, const std::string& part);

// Processes that need not be our children, watched through pidfds opened
// while they are known to live, so a reused pid is never mistaken for one.
// The destructor SIGKILLs those still alive, so a failing test leaves no orphans.
class ProcessWatch {
 public:
  explicit ProcessWatch(const std::vector<pid_t>& pids);
  ~ProcessWatch();
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // Waits until every one has ended (a zombie counts as ended), at most until
  // the deadline, and returns those still alive then.
  std::vector<pid_t> waitUntilGone(Deadline deadline);

 private:
  std::vector<pid_t> pids_;
  std::vector<int> pidFds_;  // -1 once the process is known to have ended
};

}  // namespace strata::testing

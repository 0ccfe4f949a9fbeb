// Starting and reaping child processes, for the launcher and the test harness.
//
// spawnProcess() uses fork + exec with only async-signal-safe calls between
// them, so it is safe in a process whose LibTorch or OpenMP threads already
// run. It throws SystemError when the fork fails; an exec failure shows
// up as exit code 127 of the child. pollExit never blocks; waitExit blocks
// until the child ends (callers bound it by killing the child first).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata {

struct SpawnSpec {
  std::vector<std::string> argv;              // argv[0] is looked up on PATH
  std::map<std::string, std::string> setEnv;  // added to (or replacing) this environment
  int stdoutFd = -1;                          // -1 inherits ours
  int stderrFd = -1;
  bool newProcessGroup = true;  // so a signal to the group reaches the child's children
  bool dieWithParent = true;    // SIGKILL when we die, so no worker outlives its launcher
};

struct ExitStatus {
  int code = 0;    // exit code when the child exited
  int signal = 0;  // the signal that killed it, or 0
  bool success() const { return signal == 0 && code == 0; }
  // "exit code 3" or "signal 9 (Killed)".
  std::string describe() const;
};

pid_t spawnProcess(const SpawnSpec& spec);
std::optional<ExitStatus> pollExit(pid_t pid);
ExitStatus waitExit(pid_t pid);

// The path of the running executable (/proc/self/exe).
std::string currentExecutable();

}  // namespace strata

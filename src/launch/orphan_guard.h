// The launcher's dead man's switch: its workers die with it, however it dies.
//
// PR_SET_PDEATHSIG (set by spawnProcess) only reaches the launcher's direct
// children. A worker started through a wrapper (`sh -c 'setup; worker'`,
// `env`, a container shim that forks) is a grandchild and would live on as an
// orphan when the launcher is SIGKILLed. Every worker runs in its own process
// group, so the guard kills whole groups: a small process forked at launcher
// start that holds the read end of a pipe whose only write end the launcher
// holds. The kernel closes that write end when the launcher dies for any
// reason, the guard reads EOF, SIGKILLs every process group still registered
// and exits. A group is registered once spawned and forgotten once reaped.
//
// Nothing here blocks: watch() and forget() are single pipe writes, and the
// destructor's wait ends as soon as the guard reads EOF, which it does at once.
#pragma once

#include <sys/types.h>

namespace strata {

class OrphanGuard {
 public:
  // Forks the guard. Throws SystemError when the pipe or fork fails.
  OrphanGuard();
  // Closes the pipe (the guard kills what is still registered) and reaps the guard.
  ~OrphanGuard();
  OrphanGuard(const OrphanGuard&) = delete;
  OrphanGuard& operator=(const OrphanGuard&) = delete;

  void watch(pid_t processGroup);
  void forget(pid_t processGroup);

 private:
  void send(pid_t message);

  int writeFd_ = -1;
  pid_t guard_ = -1;
};

}  // namespace strata

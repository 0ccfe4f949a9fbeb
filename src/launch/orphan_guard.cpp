#include "orphan_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "strata/error.h"

namespace strata {
namespace {

// Process groups the guard can hold at once. Workers beyond it on one node
// keep PR_SET_PDEATHSIG; only their wrappers' children would lose the guard.
constexpr int kMaxGroups = 4096;

void removeGroup(pid_t* groups, int* count, pid_t group) {
  for (int i = 0; i < *count; ++i) {
    if (groups[i] == group) {
      groups[i] = groups[--*count];
      return;
    }
  }
}

// Leaves the launcher's process group and ignores the signals a terminal or a
// supervisor aims at the launcher, so the guard outlives the launcher and acts.
void detachFromLauncher() {
  setpgid(0, 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(signal, &ignore, nullptr);
}

// The guard's whole life. It runs right after fork in a process whose
// LibTorch threads may already run, so it only makes async-signal-safe calls
// and allocates nothing.
[[noreturn]] void guardMain(int readFd) {
  detachFromLauncher();
  pid_t groups[kMaxGroups];
  int count = 0;
  for (;;) {
    pid_t message = 0;
    ssize_t n = read(readFd, &message, sizeof(message));
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof(message))) break;  // EOF: the launcher is gone
    if (message > 0 && count < kMaxGroups) groups[count++] = message;
    if (message < 0) removeGroup(groups, &count, -message);
  }
  for (int i = 0; i < count; ++i) kill(-groups[i], SIGKILL);
  _exit(0);
}

}  // namespace

OrphanGuard::OrphanGuard() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw SystemError("pipe for the orphan guard", errno);
  }
  guard_ = fork();
  if (guard_ < 0) {
    int error = errno;
    close(fds[0]);
    close(fds[1]);
    throw SystemError("fork of the orphan guard", error);
  }
  if (guard_ == 0) {
    close(fds[1]);  // else the guard's own copy would keep the pipe open forever
    guardMain(fds[0]);
  }
  close(fds[0]);
  writeFd_ = fds[1];
}

OrphanGuard::~OrphanGuard() {
  close(writeFd_);
  while (waitpid(guard_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

void OrphanGuard::watch(pid_t processGroup) { send(processGroup); }

void OrphanGuard::forget(pid_t processGroup) { send(-processGroup); }

// One pid_t is smaller than PIPE_BUF, so each message arrives whole. A failed
// write (the guard was killed) is ignored: the workers still have
// PR_SET_PDEATHSIG, and the launcher's SIGPIPE is ignored.
void OrphanGuard::send(pid_t message) { (void)!write(writeFd_, &message, sizeof(message)); }

}  // namespace strata

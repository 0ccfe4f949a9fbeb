#include "strata/util/subprocess.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/error.h"

extern char** environ;

namespace strata {
namespace {

std::vector<std::string> mergedEnvironment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string key = entry.substr(0, entry.find('='));
    if (!overrides.count(key)) entries.push_back(entry);
  }
  for (const auto& [key, value] : overrides) entries.push_back(key + "=" + value);
  return entries;
}

std::vector<char*> pointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

ExitStatus fromWaitStatus(int status) {
  ExitStatus exit;
  if (WIFEXITED(status)) exit.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  return exit;
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signal != 0) {
    return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exit code " + std::to_string(code);
}

pid_t spawnProcess(const SpawnSpec& spec) {
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls are allowed.
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> env = mergedEnvironment(spec.setEnv);
  std::vector<char*> argvPointers = pointersTo(argv);
  std::vector<char*> envPointers = pointersTo(env);
  std::string execFailure = "strata: cannot execute '" + argv.at(0) + "'\n";
  pid_t parent = getpid();

  pid_t pid = fork();
  if (pid < 0) throw SystemError("fork", errno);
  if (pid == 0) {
    if (spec.newProcessGroup) setpgid(0, 0);
    if (spec.dieWithParent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
    }
    if (spec.stdoutFd >= 0) dup2(spec.stdoutFd, STDOUT_FILENO);
    if (spec.stderrFd >= 0) dup2(spec.stderrFd, STDERR_FILENO);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    environ = envPointers.data();
    execvp(argvPointers[0], argvPointers.data());
    (void)!write(STDERR_FILENO, execFailure.data(), execFailure.size());
    _exit(127);
  }
  return pid;
}

std::optional<ExitStatus> pollExit(pid_t pid) {
  int status = 0;
  pid_t done = waitpid(pid, &status, WNOHANG);
  if (done == pid) return fromWaitStatus(status);
  if (done < 0 && errno == ECHILD) return ExitStatus{};
  return std::nullopt;
}

ExitStatus waitExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ExitStatus{};
  }
  return fromWaitStatus(status);
}

std::string currentExecutable() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n < 0) throw SystemError("readlink /proc/self/exe", errno);
  return std::string(path, static_cast<size_t>(n));
}

}  // namespace strata

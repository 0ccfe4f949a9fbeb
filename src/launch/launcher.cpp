#include "strata/launch/launcher.h"

#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "strata/runtime/error.h"
#include "strata/runtime/rendezvous.h"
#include "worker_group.h"

namespace strata {
namespace {

// The one piece of process-wide state: the signal a handler saw, read by the
// supervision loop. Signal handlers can do nothing richer.
volatile sig_atomic_t gReceivedSignal = 0;

void onSignal(int signal) { gReceivedSignal = signal; }

void installSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// After a worker reports a timeout, peers in the same collective report theirs
// within moments; whoever is still running after this window is the suspect.
constexpr std::chrono::milliseconds kTimeoutSettle{1500};

struct Attempt {
  int number = 0;
  int port = 0;
};

std::vector<WorkerSpec> workerSpecs(const LaunchOptions& o, const Attempt& attempt) {
  std::vector<WorkerSpec> specs;
  int world = static_cast<int>(o.nnodes * o.nprocPerNode);
  for (int local = 0; local < o.nprocPerNode; ++local) {
    WorkerSpec spec;
    spec.localRank = local;
    spec.globalRank = static_cast<int>(o.nodeRank * o.nprocPerNode) + local;
    spec.command = o.command;
    std::ostringstream timeout;
    timeout << o.timeoutSeconds;
    spec.env = {
        {"RANK", std::to_string(spec.globalRank)},
        {"WORLD_SIZE", std::to_string(world)},
        {"LOCAL_RANK", std::to_string(local)},
        {"LOCAL_WORLD_SIZE", std::to_string(o.nprocPerNode)},
        {"GROUP_RANK", std::to_string(o.nodeRank)},
        {"MASTER_ADDR", o.masterAddr},
        {"MASTER_PORT", std::to_string(attempt.port)},
        {"STRATA_TIMEOUT", timeout.str()},
        {"STRATA_RESTART_ATTEMPT", std::to_string(attempt.number)},
        {"TORCHELASTIC_RESTART_COUNT", std::to_string(attempt.number)},
        {"TORCHELASTIC_MAX_RESTARTS", std::to_string(o.maxRestarts)},
        {"STRATA_LAUNCHER_STORE", "1"},
        {"OMP_NUM_THREADS", std::to_string(o.threadsPerWorker)},
        {"PYTHONUNBUFFERED", "1"},
    };
    if (!o.jobToken.empty()) spec.env["STRATA_JOB_TOKEN"] = o.jobToken;
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string describeFailure(const WorkerGroup& group, int failed,
                            const std::vector<int>& suspects) {
  const WorkerState& w = group.workers()[failed];
  double seconds = std::chrono::duration<double>(w.endedAt - w.startedAt).count();
  std::ostringstream out;
  out << "strata launch: rank " << w.spec.globalRank << " (local rank " << w.spec.localRank
      << ") failed with " << w.exit->describe() << " after " << seconds << " s";
  if (!suspects.empty()) {
    out << "\nstrata launch: it timed out waiting for peers; still running then, so likely "
           "stalled:";
    for (int s : suspects) {
      out << " rank " << group.workers()[s].spec.globalRank
          << (group.isStopped(s) ? " (stopped by a signal)" : "");
    }
  }
  if (!w.lastStderr.empty()) {
    out << "\nstrata launch: last lines of rank " << w.spec.globalRank << "'s stderr:";
    for (const std::string& line : w.lastStderr) out << "\n  | " << line;
  }
  return out.str();
}

bool mentionsTimeout(const WorkerState& w) {
  for (const std::string& line : w.lastStderr) {
    if (line.find("timed out") != std::string::npos) return true;
  }
  return false;
}

enum class Outcome { kSuccess, kWorkerFailed, kSignalled };

// Runs one attempt to its end. Every wait in here is bounded: pump() by its
// argument, the stop by kStopGrace, then SIGKILL.
Outcome superviseAttempt(WorkerGroup& group, std::string* report) {
  using Clock = std::chrono::steady_clock;
  std::optional<int> failed;
  std::optional<Clock::time_point> stopAt, killAt;
  int forwarded = 0;
  while (group.anyRunning()) {
    for (int i : group.pump(std::chrono::milliseconds(50))) {
      if (!failed && !group.workers()[i].exit->success()) {
        failed = i;
        bool timedOut = mentionsTimeout(group.workers()[i]);
        stopAt = Clock::now() + (timedOut ? kTimeoutSettle : std::chrono::milliseconds(0));
      }
    }
    if (gReceivedSignal && forwarded != gReceivedSignal) {
      forwarded = gReceivedSignal;
      group.signalAll(forwarded);
      killAt = Clock::now() + kStopGrace;
    }
    if (stopAt && Clock::now() >= *stopAt && !killAt) {
      std::vector<int> suspects;
      if (mentionsTimeout(group.workers()[*failed])) {
        for (size_t i = 0; i < group.workers().size(); ++i) {
          if (!group.workers()[i].exit) suspects.push_back(static_cast<int>(i));
        }
      }
      *report = describeFailure(group, *failed, suspects);
      group.signalAll(SIGTERM);
      killAt = Clock::now() + kStopGrace;
    }
    if (killAt && Clock::now() >= *killAt) group.killAll();
  }
  if (gReceivedSignal) return Outcome::kSignalled;
  if (failed) {
    if (report->empty()) *report = describeFailure(group, *failed, {});
    return Outcome::kWorkerFailed;
  }
  return Outcome::kSuccess;
}

}  // namespace

int runLauncher(const LaunchOptions& options) {
  installSignalHandlers();
  Attempt attempt;
  attempt.port = static_cast<int>(options.masterPort);
  c10::intrusive_ptr<c10d::TCPStore> store;
  try {
    if (options.nodeRank == 0) {
      store = serveStore(options.masterAddr, attempt.port,
                         Timeouts::fromSeconds(options.timeoutSeconds).rendezvous);
      attempt.port = store->getPort();
      publishTokenFingerprint(*store, options.jobToken);
    }
  } catch (const Error& e) {
    std::cerr << "strata launch: " << e.what() << std::endl;
    return 2;
  }
  int world = static_cast<int>(options.nnodes * options.nprocPerNode);
  std::cerr << "strata launch: " << options.nprocPerNode << " workers on node " << options.nodeRank
            << " of " << options.nnodes << " (world size " << world << "), rendezvous at "
            << options.masterAddr << ":" << attempt.port << std::endl;

  for (;; ++attempt.number) {
    std::string report;
    Outcome outcome;
    {
      WorkerGroup group(workerSpecs(options, attempt));
      outcome = superviseAttempt(group, &report);
    }
    if (outcome == Outcome::kSuccess) return 0;
    if (outcome == Outcome::kSignalled) {
      std::cerr << "strata launch: stopped all workers after signal " << gReceivedSignal
                << std::endl;
      return 128 + gReceivedSignal;
    }
    std::cerr << report << std::endl;
    if (attempt.number >= options.maxRestarts) {
      if (options.maxRestarts > 0) {
        std::cerr << "strata launch: giving up after " << options.maxRestarts << " restarts"
                  << std::endl;
      }
      return 1;
    }
    std::cerr << "strata launch: restarting all workers (restart " << attempt.number + 1 << " of "
              << options.maxRestarts << ")" << std::endl;
  }
}

}  // namespace strata

#include "strata/launch/launcher.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "cluster_env.h"
#include "failure_report.h"
#include "job_end.h"
#include "job_store.h"
#include "node_agreement.h"
#include "stop_signal.h"
#include "strata/error.h"
#include "strata/runtime/flight_recorder.h"
#include "strata/runtime/rendezvous.h"
#include "strata/util/endpoint.h"
#include "worker_group.h"

namespace strata {
namespace {

// When one worker fails, its peers usually fail moments later because of it
// (connection reset, timeout). The launcher waits this long before stopping
// everyone, so it can tell the cause from the echoes.
constexpr std::chrono::milliseconds kFailureSettle{1500};

struct Attempt {
  int number = 0;
  int port = 0;
  std::string flightBase;  // the job's flight record folder; empty: none

  std::string flightDir() const {
    return flightBase.empty() ? "" : flightBase + "/attempt-" + std::to_string(number);
  }
};

// Where the round's workers find their store: the one the round's first node
// serves (JobStore).
std::pair<std::string, int> workersStore(const NodeMap& nodes) {
  std::optional<std::pair<std::string, int64_t>> at = parseEndpoint(nodes.storeAddress);
  if (!at)
    throw ProtocolError("the round's store address '" + nodes.storeAddress + "' is not HOST:PORT");
  return {at->first, static_cast<int>(at->second)};
}

std::vector<WorkerSpec> workerSpecs(const LaunchOptions& o, const NodeMap& nodes,
                                    const Attempt& attempt) {
  std::vector<WorkerSpec> specs;
  int node = nodes.positionOf(o.nodeRank);
  auto [storeHost, storePort] = workersStore(nodes);
  for (int local = 0; local < o.nprocPerNode; ++local) {
    WorkerSpec spec;
    spec.localRank = local;
    spec.globalRank = nodes.firstRankOf(node) + local;
    spec.command = o.command;
    std::ostringstream timeout;
    timeout << o.timeoutSeconds;
    spec.env = {
        {"RANK", std::to_string(spec.globalRank)},
        {"WORLD_SIZE", std::to_string(nodes.worldSize())},
        {"LOCAL_RANK", std::to_string(local)},
        {"LOCAL_WORLD_SIZE", std::to_string(o.nprocPerNode)},
        {"GROUP_RANK", std::to_string(node)},
        {"GROUP_WORLD_SIZE", std::to_string(nodes.sizes.size())},
        {"STRATA_NODE_SIZES", nodes.text()},
        {"MASTER_ADDR", storeHost},
        {"MASTER_PORT", std::to_string(storePort)},
        {"STRATA_TIMEOUT", timeout.str()},
        {"STRATA_RESTART_ATTEMPT", std::to_string(attempt.number)},
        {"TORCHELASTIC_RESTART_COUNT", std::to_string(attempt.number)},
        {"TORCHELASTIC_MAX_RESTARTS", std::to_string(o.maxRestarts)},
        {"STRATA_LAUNCHER_STORE", "1"},
        // torchrun's worker environment, so a PyTorch script (init_process_group
        // from the environment) runs unchanged: it connects to this launcher's
        // store at MASTER_PORT instead of serving its own there.
        {"TORCHELASTIC_USE_AGENT_STORE", "True"},
        {"TORCHELASTIC_RUN_ID", o.runId},
        {"ROLE_NAME", "default"},
        {"ROLE_RANK", std::to_string(spec.globalRank)},
        {"ROLE_WORLD_SIZE", std::to_string(nodes.worldSize())},
        {"OMP_NUM_THREADS", std::to_string(o.threadsPerWorker)},
        {"PYTHONUNBUFFERED", "1"},
    };
    if (!o.jobToken.empty()) spec.env["STRATA_JOB_TOKEN"] = o.jobToken;
    if (!attempt.flightBase.empty()) spec.env["STRATA_FLIGHT_DIR"] = attempt.flightDir();
    specs.push_back(std::move(spec));
  }
  return specs;
}

// kPeerNodeFailed: another node's workers failed and it restarts the job
// (job_end.h's announceRestart); this node's workers were stopped to join it.
enum class Outcome { kSuccess, kWorkerFailed, kPeerNodeFailed, kSignalled };

struct AttemptResult {
  Outcome outcome = Outcome::kSuccess;
  std::string report;  // describeFailure() after a worker failed
  std::string cause;   // failureCause() after a worker failed, or the restarting node
};

// How often a multi-node launcher asks whether another node restarts the job.
constexpr std::chrono::seconds kPeerPoll{1};

// Runs one attempt to its end. Every wait in here is bounded: pump() by its
// argument, the stop by kStopGrace, then SIGKILL. `restartingNode` (empty
// on one node) names another node that announced a restart, or returns "":
// a worker of this node that hangs instead of failing (stopped, or stuck
// outside communication) would otherwise keep this node in a round the
// others have left.
AttemptResult superviseAttempt(WorkerGroup& group,
                               const std::function<std::string()>& restartingNode) {
  AttemptResult result;
  using Clock = std::chrono::steady_clock;
  std::vector<int> failures;
  std::optional<Clock::time_point> stopAt, killAt;
  Clock::time_point nextPoll = Clock::now() + kPeerPoll;
  int forwarded = 0;
  while (group.anyRunning()) {
    for (int i : group.pump(std::chrono::milliseconds(50))) {
      if (group.workers()[i].exit->success()) continue;
      failures.push_back(i);
      if (!stopAt) stopAt = Clock::now() + kFailureSettle;
    }
    if (stopSignal() && forwarded != stopSignal()) {
      forwarded = stopSignal();
      group.signalAll(forwarded);
      killAt = Clock::now() + kStopGrace;
    }
    if (restartingNode && !stopAt && !killAt && Clock::now() >= nextPoll) {
      nextPoll = Clock::now() + kPeerPoll;
      std::string node = restartingNode();
      if (!node.empty()) {
        result.outcome = Outcome::kPeerNodeFailed;
        result.cause = node + " failed and restarts the job";
        result.report = "strata launch: " + result.cause + "; this node's workers stop to join it";
        group.signalAll(SIGTERM);
        killAt = Clock::now() + kStopGrace;
      }
    }
    bool settled = stopAt && (Clock::now() >= *stopAt || failures.size() == group.workers().size());
    if (settled && !killAt) {
      result.report = describeFailure(group, failures);
      group.signalAll(SIGTERM);
      killAt = Clock::now() + kStopGrace;
    }
    if (killAt && Clock::now() >= *killAt) group.killAll();
  }
  if (stopSignal()) {
    result.outcome = Outcome::kSignalled;
  } else if (result.outcome == Outcome::kPeerNodeFailed) {
    return result;
  } else if (!failures.empty()) {
    result.outcome = Outcome::kWorkerFailed;
    if (result.report.empty()) result.report = describeFailure(group, failures);
    result.cause = failureCause(group, failures);
  }
  return result;
}

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string flightBaseOf(const LaunchOptions& o) {
  if (o.flightDir == "none") return "";
  if (!o.flightDir.empty()) return o.flightDir;
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/strata-flight-" + hostName() + "-" +
         std::to_string(getpid());
}

// After a failed attempt: where each of this node's ranks stopped, from the
// files the workers' flight recorders left (the workers are gone by now).
void printFlightDiagnosis(const Attempt& attempt) {
  if (attempt.flightBase.empty()) return;
  std::string dir = attempt.flightDir();
  try {
    std::cerr << "strata launch: " << diagnoseFlight(readFlightRecords(dir))
              << "\nstrata launch: the records are in " << dir << " (strata debug flight " << dir
              << " prints this again)" << std::endl;
  } catch (const Error& e) {
    std::cerr << "strata launch: no flight records to show: " << e.what() << std::endl;
  }
}

const char kRoundKey[] = "round";

int64_t roundUnderWay(c10d::Store& control) {
  if (!control.check({kRoundKey})) return 0;
  std::vector<uint8_t> text = control.get(kRoundKey);
  return std::stoll(std::string(text.begin(), text.end()));
}

// Raises the round under way to `round`, never lowers it: under etcd any
// launcher opens a round, and one still leaving an earlier round must not
// undo a later one.
void openRound(c10d::Store& control, int64_t round) {
  std::string text = std::to_string(round);
  std::vector<uint8_t> desired(text.begin(), text.end());
  for (;;) {
    std::vector<uint8_t> expected;
    if (control.check({kRoundKey})) expected = control.get(kRoundKey);
    if (!expected.empty() && std::stoll(std::string(expected.begin(), expected.end())) >= round)
      return;
    if (control.compareSet(kRoundKey, expected, desired) == desired) return;
  }
}

// An elastic job's round closed without this node: it waits, logging now and
// then, for node 0 to open the next (a failure elsewhere), for as long as the
// job runs. nullopt: the job ended without it (job_end.h).
std::optional<int64_t> awaitNextRound(c10d::Store& control, int64_t round, const std::string& who) {
  constexpr std::chrono::seconds kReport{30};
  auto nextReport = std::chrono::steady_clock::now() + kReport;
  for (;;) {
    throwIfStopSignalled();
    if (jobEndedWith(control) >= 0) return std::nullopt;
    int64_t now = roundUnderWay(control);
    if (now > round) return now;
    if (std::chrono::steady_clock::now() >= nextReport) {
      std::cerr << "strata launch: " << who << " still waits for the job's next round (round "
                << round << " runs without it)" << std::endl;
      nextReport += kReport;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Every node (node 0 too) checks its job token against the store and claims
// its place in the round before starting a worker, so a node with another
// token or flags that disagree is refused once, at once, and by name, instead
// of each worker failing alone, restarts being spent on it, and the other
// nodes' workers waiting for it until they time out.
NodeClaim claimOf(const LaunchOptions& o, const JobStore& job) {
  return {o.nodeRank,      o.nnodes,   o.nprocPerNode, o.maxRestarts,
          o.fewestNodes(), hostName(), getpid(),       job.workersAddress};
}

c10::intrusive_ptr<c10d::Store> roundScope(const LaunchOptions& o, const JobStore& job,
                                           int64_t round, std::chrono::milliseconds timeout) {
  return jobScope(job.store, o.jobToken, "launchers/round-" + std::to_string(round), timeout);
}

std::optional<NodeMap> joinRound(const LaunchOptions& o, const JobStore& job, int64_t round,
                                 std::chrono::milliseconds timeout) {
  if (o.nodeRank == 0 || job.deciders == Deciders::kEveryLauncher) openRound(*job.control, round);
  std::chrono::milliseconds joinWait(static_cast<int64_t>(o.joinWaitSeconds * 1000));
  return agreeOnNodes(roundScope(o, job, round, timeout), claimOf(o, job), job.deciders, joinWait,
                      timeout);
}

void printRound(const LaunchOptions& o, const NodeMap& nodes, const Attempt& attempt) {
  int node = nodes.positionOf(o.nodeRank);
  int first = nodes.firstRankOf(node);
  std::cerr << "strata launch: " << o.nprocPerNode << " workers (ranks " << first << "-"
            << first + o.nprocPerNode - 1 << ") on node " << o.nodeRank << " (" << hostName()
            << ") of " << nodes.sizes.size();
  if (o.elastic()) std::cerr << " (elastic " << o.minNodes << ":" << o.nnodes << ")";
  std::cerr << " (workers per node " << nodes.text() << ", world size " << nodes.worldSize()
            << "), rendezvous at " << rendezvousText(o, attempt.port);
  if (!nodes.storeAddress.empty()) std::cerr << ", workers' store at " << nodes.storeAddress;
  if (attempt.number > 0) std::cerr << ", round " << attempt.number;
  std::cerr << std::endl;
}

// superviseAttempt's question to the store in a multi-node job: which other
// node of the round announced a restart. A store that cannot be asked (node
// 0 gone) answers nothing: the workers then fail by themselves.
std::function<std::string()> peerRestartWatch(const LaunchOptions& o, const JobStore& job,
                                              const NodeMap& nodes, const Attempt& attempt,
                                              std::chrono::milliseconds timeout) {
  if (o.nnodes == 1) return nullptr;
  c10::intrusive_ptr<c10d::Store> round;
  try {
    round = roundScope(o, job, attempt.number, timeout);
  } catch (const std::exception&) {
    return nullptr;
  }
  return [round, nodes, self = o.nodeRank]() -> std::string {
    try {
      return restartingNode(*round, nodes, self);
    } catch (const std::exception&) {
      return "";
    }
  };
}

// How the attempt ends for this launcher: the exit code, or nullopt to run
// the next round. A multi-node job passes the exit barrier (job_end.h): node
// 0 keeps the store until every node has ended, and every launcher exits
// with the job's code.
std::optional<int> endOfAttempt(const LaunchOptions& o, const JobStore& job, const NodeMap& nodes,
                                const Attempt& attempt, const AttemptResult& result,
                                std::chrono::milliseconds timeout) {
  bool failed = result.outcome != Outcome::kSuccess;
  bool restartsLeft = attempt.number < o.maxRestarts;
  std::optional<int> code;
  if (failed && restartsLeft) {
    if (o.nnodes > 1)
      announceRestart(*roundScope(o, job, attempt.number, timeout), claimOf(o, job),
                      {1, result.cause});
    return std::nullopt;
  }
  if (o.nnodes == 1) {
    code = failed ? 1 : 0;
    // Under etcd the job's keys outlive it: a later job with its run id is told it ended.
    if (job.deciders == Deciders::kEveryLauncher) markJobEnded(*job.control, *code);
  } else {
    code =
        agreeOnJobEnd(*roundScope(o, job, attempt.number, timeout), *job.control, claimOf(o, job),
                      nodes, {failed ? 1 : 0, result.cause}, job.deciders, timeout);
    if (!code && restartsLeft) return std::nullopt;  // another node restarts; so does this one
    if (!code) code = 1;
  }
  if (failed && o.maxRestarts > 0) {
    std::cerr << "strata launch: giving up after " << o.maxRestarts
              << " restarts; in the last attempt " << result.cause << std::endl;
  }
  return code;
}

int runRounds(const LaunchOptions& options, OrphanGuard* guard, const std::string& flightBase) {
  std::chrono::milliseconds timeout = Timeouts::fromSeconds(options.timeoutSeconds).rendezvous;
  Attempt attempt;
  attempt.port = static_cast<int>(options.masterPort);
  attempt.flightBase = flightBase;
  JobStore job;
  std::string who = "node " + std::to_string(options.nodeRank);
  auto storeLost = [&](const char* doing, const std::string& what) {
    std::cerr << "strata launch: " << who << " (" << hostName()
              << ") lost the job's rendezvous store at " << rendezvousText(options, attempt.port)
              << (options.rdzvBackend == RendezvousBackend::kStatic ? " (node 0's launcher)" : "")
              << " while it " << doing << ": " << what << std::endl;
    return 2;
  };
  auto stopped = [&](const char* doing, int signal) {
    std::cerr << "strata launch: " << who << " stopped by signal " << signal << " while it "
              << doing << std::endl;
    return 128 + signal;
  };
  try {
    job = openJobStore(options, timeout, &attempt.port);
    // A node started late (a replacement) joins the round under way.
    attempt.number = static_cast<int>(roundUnderWay(*job.control));
  } catch (const Error& e) {
    std::cerr << "strata launch: " << who << " cannot join the job at "
              << rendezvousText(options, attempt.port) << ": " << e.what() << std::endl;
    return 2;
  }
  for (;;) {
    std::optional<NodeMap> nodes;
    try {
      serveWorkersStore(options, &job, attempt.number, timeout);
      nodes = joinRound(options, job, attempt.number, timeout);
      while (!nodes) {
        std::cerr << "strata launch: round " << attempt.number << " of the job closed without "
                  << who << "; it waits for the next" << std::endl;
        std::optional<int64_t> next = awaitNextRound(*job.control, attempt.number, who);
        if (!next) {
          int code = jobEndedWith(*job.control);
          std::cerr << "strata launch: the job ended with exit code " << code << " without " << who
                    << std::endl;
          return code;
        }
        attempt.number = static_cast<int>(*next);
        nodes = joinRound(options, job, attempt.number, timeout);
      }
    } catch (const StopSignalled& e) {
      return stopped("joined a round of the job", e.signal());
    } catch (const Error& e) {
      std::cerr << "strata launch: " << who << " cannot join the job at "
                << rendezvousText(options, attempt.port) << ": " << e.what() << std::endl;
      return 2;
    } catch (const c10::Error& e) {
      return storeLost("joined a round of the job", e.what_without_backtrace());
    } catch (const std::exception& e) {
      return storeLost("joined a round of the job", e.what());
    }
    printRound(options, *nodes, attempt);
    AttemptResult result;
    {
      WorkerGroup group(workerSpecs(options, *nodes, attempt), *guard);
      result = superviseAttempt(group, peerRestartWatch(options, job, *nodes, attempt, timeout));
    }
    if (result.outcome == Outcome::kSignalled) {
      std::cerr << "strata launch: stopped all workers after signal " << stopSignal() << std::endl;
      printFlightDiagnosis(attempt);
      return 128 + stopSignal();
    }
    if (result.outcome == Outcome::kWorkerFailed) {
      std::cerr << result.report << std::endl;
      printFlightDiagnosis(attempt);
    } else if (result.outcome == Outcome::kPeerNodeFailed) {
      std::cerr << result.report << std::endl;
    }
    std::optional<int> code;
    try {
      code = endOfAttempt(options, job, *nodes, attempt, result, timeout);
    } catch (const StopSignalled& e) {
      return stopped("waited for the other nodes to finish", e.signal());
    } catch (const Error& e) {
      std::cerr << "strata launch: " << e.what() << std::endl;
      return 1;
    } catch (const c10::Error& e) {
      storeLost("waited for the other nodes to finish", e.what_without_backtrace());
      return 1;
    }
    if (code) return *code;
    ++attempt.number;
    std::cerr << "strata launch: restarting all workers (restart " << attempt.number << " of "
              << options.maxRestarts << ")" << std::endl;
  }
}

}  // namespace

int runLauncher(const LaunchOptions& options) {
  installStopHandlers();
  // Forked before the store's threads and sockets exist, so it holds none of them.
  OrphanGuard guard;
  std::string flightBase = flightBaseOf(options);
  int code = runRounds(options, &guard, flightBase);
  // A folder of the launcher's own choosing is kept only when it can explain a failure.
  std::error_code ignored;
  if (code == 0 && options.flightDir.empty() && !flightBase.empty())
    std::filesystem::remove_all(flightBase, ignored);
  return code;
}

}  // namespace strata

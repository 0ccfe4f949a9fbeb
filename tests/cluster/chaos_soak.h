// The chaos soak: an elastic training job on a rehearsed cluster of three
// nodes (network namespaces, tests/support/rehearsal_cluster.h), each node
// `strata launch --nnodes 2:3` with one worker training a tiny GPT under
// `--elastic-policy dp --resume`, while faults are injected one after
// another:
//
//   kill-worker   a worker SIGKILLed
//   kill-node     a node's launcher SIGKILLed (its worker dies with it); a
//                 replacement launcher starts, and joins at the next round
//   stop-worker   a worker SIGSTOPped past the communication timeout
//   fill-disk     the checkpoint disk (a small tmpfs) filled until a save
//                 fails, then freed
//   cut-link      a node's link taken down past the timeout, then up again
//
// Under the c10d backend node 0 serves the rendezvous store, so it is never
// killed nor cut off (its worker is fair game). Under etcd (SoakOptions::etcd)
// a fourth rehearsed node runs etcd and the three training nodes are peers:
// any of them, node 0 included, may be killed or cut off. After each fault the soak waits until the
// job has trained past the step it had reached, and records how long that took (the time the fault
// cost). At the end it checks that the job finished, that every step's loss equals an uninterrupted
// run's (within 1e-5 relative: the layout moves between dp 3 and dp 2), that no process of the soak
// is left, and that the latest complete checkpoint verifies.
//
// Needs root and iproute2 (the rehearsal) and tmpfs mounts (fill-disk).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata::testing {

enum class FaultKind { kKillWorker, kKillNode, kStopWorker, kFillDisk, kCutLink };
const char* faultName(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kKillWorker;
  int node = 0;
};

// `count` faults drawn from `seed`: every kind in turn, shuffled, each on a
// node it may hit (kill-node and cut-link spare node 0 unless
// `nodeZeroMayFail`, as under etcd).
std::vector<Fault> faultPlan(int count, uint64_t seed, bool nodeZeroMayFail = false);

struct SoakOptions {
  std::string strataBinary;
  std::vector<Fault> faults;
  bool etcd = false;          // the launchers meet in etcd (--rdzv-backend etcd), not at node 0
  double timeoutSeconds = 8;  // the workers' communication timeout (--timeout)
  int stepsBetweenFaults = 6;
  int checkpointEvery = 4;
};

struct FaultOutcome {
  Fault fault;
  int stepAtFault = 0;
  double secondsLost = 0;  // from the fault until the job trained past stepAtFault
};

struct SoakReport {
  bool finished = false;  // every launcher of the final round exited 0
  std::vector<FaultOutcome> faults;
  std::vector<double> losses, uninterrupted;  // metrics.jsonl of both runs
  double largestRelativeDifference = 0;
  int largestDifferenceStep = 0;
  std::vector<pid_t> leftOver;  // processes of the soak still alive at the end
  bool checkpointVerified = false;
  std::string log;  // what went on, for a failing test
  std::string summary() const;
};

SoakReport runChaosSoak(const SoakOptions& options);

}  // namespace strata::testing

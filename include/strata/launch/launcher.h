// `strata launch`: start the workers of one node, watch them, tear them down.
//
// runLauncher blocks until the job ends and returns the exit code for the
// launcher process: 0 when every worker exited 0, 1 when a worker failed
// (after restarts ran out; the last words name the rank and its exit code or
// signal), 2 for bad options or a rendezvous this node cannot serve or join
// (port in use; on a node other than 0, node 0 unreachable within the timeout
// or the job token refused, before any worker starts), 128+N after signal N.
// Workers die with the launcher even when it is SIGKILLed (src/launch/orphan_guard.h).
// Each start and restart is a round that every node joins (node 0 decides,
// src/launch/node_agreement.h), so all nodes agree on the attempt number. An
// elastic job (--nnodes MIN:MAX) re-forms after a failure with the nodes
// that come back, at least MIN, and a node started later joins at the next
// round; node 0 serves the rendezvous and must stay up.
// When a worker exits non-zero or dies of a signal, the others are stopped
// within kStopGrace (SIGTERM, then SIGKILL) and the failed rank, its exit code
// or signal and its last lines of stderr are printed. A worker that stalls is
// caught by its peers' communication timeout: they fail, and the job is torn
// down the same way; then the launcher prints the flight recorder's
// diagnosis of this node's ranks (strata/runtime/flight_recorder.h). A
// multi-node job's launchers pass an exit barrier (src/launch/job_end.h):
// each exits with the whole job's code. The launcher never waits on anything
// without a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// Where the launchers meet (--rdzv-backend). kStatic ("c10d", "static"):
// node 0's launcher serves a TCPStore at --master-addr:--master-port, so node
// 0 must stay up. kEtcd ("etcd", "etcd-v2"): the launchers meet in an etcd
// cluster at --rdzv-endpoint, and the job survives the loss of any node.
enum class RendezvousBackend { kStatic, kEtcd };

struct LaunchOptions {
  int64_t nprocPerNode = 1;
  int64_t nnodes = 1;    // the most nodes (--nnodes N or MIN:MAX)
  int64_t minNodes = 0;  // the fewest an elastic job runs on; 0: not elastic (nnodes)
  // Elastic: once minNodes have joined a round, how long node 0 waits for more.
  double joinWaitSeconds = 10;
  int64_t nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  int64_t masterPort = 0;  // 0: pick a free port (single node only)
  RendezvousBackend rdzvBackend = RendezvousBackend::kStatic;
  std::vector<std::string> etcdEndpoints;  // kEtcd: "HOST:PORT" each
  // kEtcd: the address this node's workers' store is served at, for the
  // other nodes; empty: the local address of this host's connection to etcd.
  std::string localAddr;
  int64_t maxRestarts = 0;
  double timeoutSeconds = 300;  // exported to workers as STRATA_TIMEOUT
  std::string jobToken;         // exported as STRATA_JOB_TOKEN; default from the environment
  std::string runId = "none";   // --rdzv-id, exported as TORCHELASTIC_RUN_ID (torchrun's default)
  // --flight-dir: the workers' flight recorder files go to DIR/attempt-N
  // (STRATA_FLIGHT_DIR). Empty: a fresh folder under $TMPDIR, removed when
  // the job succeeds; "none": no recorder.
  std::string flightDir;
  int64_t threadsPerWorker = 1;
  std::vector<std::string> command;

  int64_t fewestNodes() const { return minNodes > 0 ? minNodes : nnodes; }
  bool elastic() const { return fewestNodes() < nnodes; }
};

constexpr std::chrono::seconds kStopGrace{3};
constexpr int kStderrLinesKept = 20;

int runLauncher(const LaunchOptions& options);

}  // namespace strata

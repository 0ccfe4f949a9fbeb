// The launchers' rendezvous store. Static backend: node 0 serves it; the
// others connect. Etcd: the launchers' keys live in etcd. `control` holds the
// number of the round under way ("round"), raised as each round opens.
//
// The workers meet in a store of their own, served anew for every round (as
// torchrun's rendezvous does): a restarted PyTorch script connects to it
// without a prefix per attempt (torch 2.x's init_process_group under
// TORCHELASTIC_USE_AGENT_STORE adds none), so the keys of an earlier round
// must not be there. The round's first node's is the round's: node 0's under
// the static backend, any node's under etcd.
//
// Opening blocks up to `timeout` (the rendezvous timeout) and throws
// TimeoutError naming the store when it cannot be reached, ConfigError for
// an etcd job that has already ended.
#pragma once

#include <chrono>
#include <string>

#include "node_agreement.h"
#include "strata/launch/launcher.h"
#include "strata/runtime/rendezvous.h"

namespace strata {

struct JobStore {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Store> control;
  Deciders deciders = Deciders::kNodeZero;
  std::string workersHost;                     // where this node serves one; empty: it serves none
  c10::intrusive_ptr<c10d::TCPStore> workers;  // this round's, served by this node
  std::string workersAddress;                  // its "HOST:PORT"
};

// "etcd at 10.0.0.5:2379 (run id job-7)" or "10.0.0.1:29500".
std::string rendezvousText(const LaunchOptions& o, int port);

// The job's store for this launcher; `*port` is the static backend's port
// to serve or reach, set to the one served when it was 0.
JobStore openJobStore(const LaunchOptions& o, std::chrono::milliseconds timeout, int* port);

// Serves this round's workers' store where this node serves one, closing the
// last round's first. Under etcd the first round's is at --master-port (the
// port a pod declares); later rounds' and the static backend's at a free port
// (node 0's --master-port is the launchers').
void serveWorkersStore(const LaunchOptions& o, JobStore* job, int64_t round,
                       std::chrono::milliseconds timeout);

}  // namespace strata

#include "job_store.h"

#include "deadline_store.h"
#include "etcd_store.h"
#include "job_end.h"
#include "strata/error.h"
#include "strata/runtime/rendezvous.h"

namespace strata {
namespace {

std::string hostPort(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

JobStore openEtcdStore(const LaunchOptions& o, std::chrono::milliseconds timeout) {
  JobStore job;
  auto etcd = c10::make_intrusive<EtcdStore>(o.etcdEndpoints, o.runId, timeout);
  publishFingerprintOnce(*etcd, o.jobToken);
  job.deciders = Deciders::kEveryLauncher;
  std::string host = o.localAddr.empty() ? etcd->localAddress() : o.localAddr;
  job.store = etcd;
  job.control = jobScope(job.store, o.jobToken, "launchers", timeout);
  int ended = jobEndedWith(*job.control);
  if (ended >= 0) {
    throw ConfigError("the job with --rdzv-id " + o.runId + " in etcd at " + etcd->endpointsText() +
                      " has already ended (exit code " + std::to_string(ended) +
                      "); give a new job its own --rdzv-id (the ended job's keys expire " +
                      describeDuration(EtcdStore::kLeaseTtl) + " after its last launcher exits)");
  }
  job.workersHost = host;
  return job;
}

}  // namespace

// "etcd at 10.0.0.5:2379 (run id job-7)" or "10.0.0.1:29500".
std::string rendezvousText(const LaunchOptions& o, int port) {
  if (o.rdzvBackend == RendezvousBackend::kStatic) return hostPort(o.masterAddr, port);
  std::string endpoints;
  for (const std::string& e : o.etcdEndpoints) endpoints += (endpoints.empty() ? "" : ",") + e;
  return "etcd at " + endpoints + " (run id " + o.runId + ")";
}

JobStore openJobStore(const LaunchOptions& o, std::chrono::milliseconds timeout, int* port) {
  if (o.rdzvBackend == RendezvousBackend::kEtcd) return openEtcdStore(o, timeout);
  JobStore job;
  if (o.nodeRank == 0) {
    c10::intrusive_ptr<c10d::TCPStore> served =
        serveStore(o.masterAddr, *port, o.jobToken, timeout);
    *port = served->getPort();
    job.store = served;
    job.workersHost = o.masterAddr;
  } else {
    // Node 0's store over the network: every call bounded (deadline_store.h).
    job.store = c10::make_intrusive<DeadlineStore>(
        connectStore(o.masterAddr, *port, timeout),
        "the job's rendezvous store at " + rendezvousText(o, *port) + " (node 0's launcher)");
  }
  job.control = jobScope(job.store, o.jobToken, "launchers", timeout);
  return job;
}

void serveWorkersStore(const LaunchOptions& o, JobStore* job, int64_t round,
                       std::chrono::milliseconds timeout) {
  if (job->workersHost.empty()) return;
  job->workers.reset();
  bool declaredPort = o.rdzvBackend == RendezvousBackend::kEtcd && round == 0;
  int port = declaredPort ? static_cast<int>(o.masterPort) : 0;
  job->workers = serveStore(job->workersHost, port, o.jobToken, timeout);
  job->workersAddress = hostPort(job->workersHost, job->workers->getPort());
}

}  // namespace strata

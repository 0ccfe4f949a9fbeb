#include "strata/launch/launch_flags.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <optional>
#include <tuple>
#include <utility>

#include "cluster_env.h"
#include "strata/runtime/timeouts.h"
#include "strata/util/cli_flags.h"
#include "strata/util/endpoint.h"

namespace strata {
namespace {

// Under the static backend --rdzv-endpoint sets what --master-addr and
// --master-port set, so it excludes them rather than letting the order of
// declaration pick a winner. What it means depends on --rdzv-backend, so it
// is read after the parse (useEndpoint).
void addEndpointFlags(CLI::App& command, LaunchFlags::Rendezvous& r, CLI::Option* addr,
                      CLI::Option* port) {
  command
      .add_option("--rdzv-endpoint,--rdzv_endpoint", r.endpoint,
                  "c10d/static: node 0's HOST:PORT, --master-addr and --master-port in one; "
                  "etcd: etcd's client endpoints HOST:PORT[,HOST:PORT...]")
      ->type_name("ENDPOINT")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->excludes(addr)
      ->excludes(port);
  command
      .add_option("--rdzv-backend,--rdzv_backend", r.backend,
                  "where the launchers meet: c10d (or static: node 0 serves the store, the "
                  "default) or etcd (or etcd-v2: an etcd cluster; survives the loss of any node)")
      ->type_name("NAME")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

std::optional<RendezvousBackend> backendNamed(const std::string& name) {
  if (name == "c10d" || name == "static") return RendezvousBackend::kStatic;
  if (name == "etcd" || name == "etcd-v2") return RendezvousBackend::kEtcd;
  return std::nullopt;
}

// --nnodes N, or MIN:MAX for an elastic job.
void addNodesFlag(CLI::App& command, LaunchOptions& o) {
  CLI::callback_t setNodes = [&command, &o](const CLI::results_t& values) {
    std::optional<std::pair<int64_t, int64_t>> range = parseNodeRange(values.back());
    if (!range) {
      throw flagError(command, "--nnodes expects N or MIN:MAX with 1 <= MIN <= MAX, got '" +
                                   values.back() + "'");
    }
    o.nnodes = range->second;
    o.minNodes = range->first < range->second ? range->first : 0;
    return true;
  };
  command
      .add_option("--nnodes", setNodes,
                  "nodes in the job: N, or MIN:MAX for an elastic job that re-forms on as few as "
                  "MIN after a failure (default: 1)")
      ->type_name("N|MIN:MAX")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void addFlags(CLI::App& command, LaunchOptions& o, LaunchFlags::Rendezvous& r) {
  addIntFlag(command, "--nproc-per-node,--nproc_per_node", &o.nprocPerNode, "workers on this node",
             1);
  addNodesFlag(command, o);
  addIntFlag(command, "--node-rank,--node_rank", &o.nodeRank, "this node's index in [0, nnodes)",
             0);
  CLI::Option* addr = addTextFlag(command, "--master-addr,--master_addr", &o.masterAddr,
                                  "address of node 0, which serves the rendezvous");
  CLI::Option* port = addIntFlag(
      command, "--master-port,--master_port", &o.masterPort,
      "rendezvous port; 0 picks a free one (one node only; under etcd: this node's workers' "
      "store, free by default)",
      0, kMaxPort);
  addEndpointFlags(command, r, addr, port);
  addTextFlag(command, "--local-addr,--local_addr", &o.localAddr,
              "etcd: the address the other nodes reach this one at (default: this host's "
              "address towards etcd)");
  addIntFlag(command, "--max-restarts,--max_restarts", &o.maxRestarts,
             "restart the whole group this many times", 0);
  addRealFlag(command, "--join-wait", &o.joinWaitSeconds,
              "elastic jobs: once the fewest nodes have joined a round, seconds to wait for more");
  addRealFlag(command, "--timeout", &o.timeoutSeconds,
              "seconds any blocking call may wait, exported to the workers as STRATA_TIMEOUT; "
              "unset: STRATA_TIMEOUT if set");
  addTextFlag(command, "--rdzv-id,--rdzv_id", &o.runId,
              "the job's name, exported to the workers as TORCHELASTIC_RUN_ID (default: none)");
  addTextFlag(command, "--flight-dir", &o.flightDir,
              "folder for the workers' flight records, read when a job fails; 'none': off "
              "(default: a fresh folder under $TMPDIR, removed after a success)");
  addTextFlag(command, "--job-token", &o.jobToken,
              "shared secret; processes without it are refused; unset: STRATA_JOB_TOKEN");
  addIntFlag(command, "--threads-per-worker", &o.threadsPerWorker, "intra-op threads per worker",
             1);
  command.add_option("command", o.command, "the worker command and its arguments")
      ->type_name("ARGS");
}

void checkOptions(const CLI::App& command, const LaunchOptions& o) {
  if (o.command.empty())
    throw flagError(command, "no worker command: use strata launch [flags] -- COMMAND ARGS...");
  if (o.nodeRank >= o.nnodes) {
    throw flagError(command, "--node-rank " + std::to_string(o.nodeRank) +
                                 " is outside [0, --nnodes " + std::to_string(o.nnodes) + ")");
  }
  if (o.rdzvBackend == RendezvousBackend::kStatic && o.nnodes > 1 && o.masterPort == 0) {
    throw flagError(command, "--nnodes " + std::to_string(o.nnodes) +
                                 " needs an explicit --master-port (or --rdzv-endpoint) that "
                                 "every node shares");
  }
  if (o.rdzvBackend == RendezvousBackend::kEtcd && o.etcdEndpoints.empty()) {
    throw flagError(command,
                    "--rdzv-backend etcd needs --rdzv-endpoint: etcd's client endpoints "
                    "HOST:PORT[,HOST:PORT...] (or PET_RDZV_ENDPOINT)");
  }
  if (!(o.timeoutSeconds > 0))
    throw flagError(command, "--timeout must be a positive number of seconds");
  if (!(o.joinWaitSeconds >= 0))
    throw flagError(command, "--join-wait must be a non-negative number of seconds");
}

std::optional<std::string> fromEnvironment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

// --rdzv-endpoint (or PET_RDZV_ENDPOINT, named in the error when it is the
// source) as the backend reads it.
void useEndpoint(const CLI::App& command, const std::string& text, bool fromFlag,
                 LaunchOptions* o) {
  auto refuse = [&](const std::string& flagWords, const std::string& variableWords) {
    if (fromFlag) throw flagError(command, "--rdzv-endpoint " + flagWords + ", got '" + text + "'");
    throw ConfigError("PET_RDZV_ENDPOINT " + variableWords + ", got '" + text + "'");
  };
  if (o->rdzvBackend == RendezvousBackend::kEtcd) {
    std::optional<std::vector<std::string>> endpoints = etcdEndpointsIn(text);
    if (!endpoints)
      refuse("expects etcd's client endpoints HOST:PORT[,HOST:PORT...] (http only)",
             "must be etcd's client endpoints HOST:PORT[,HOST:PORT...] (http only)");
    o->etcdEndpoints = *endpoints;
    return;
  }
  std::optional<std::pair<std::string, int64_t>> endpoint = parseEndpoint(text);
  if (!endpoint)
    refuse("expects HOST:PORT with PORT in [0, " + std::to_string(kMaxPort) + "]",
           "must be HOST:PORT");
  std::tie(o->masterAddr, o->masterPort) = *endpoint;
}

void useBackend(const CLI::App& command, const std::optional<std::string>& name, bool fromFlag,
                LaunchOptions* o) {
  if (!name) return;
  std::optional<RendezvousBackend> backend = backendNamed(*name);
  const std::string expected = "c10d, static, etcd or etcd-v2";
  if (!backend && fromFlag)
    throw flagError(command, "--rdzv-backend expects " + expected + ", got '" + *name + "'");
  if (!backend) throw ConfigError("PET_RDZV_BACKEND must be " + expected + ", got '" + *name + "'");
  o->rdzvBackend = *backend;
}

// Kubeflow's PET_* and the Indexed Job's index, for the flags not given.
void useClusterEnvironment(const CLI::App& command, const LaunchFlags::Rendezvous& r,
                           LaunchOptions* o) {
  ClusterEnvironment env = readClusterEnvironment(fromEnvironment);
  auto given = [&](const char* flag) { return command.count(flag) > 0; };
  bool endpointGiven = given("--rdzv-endpoint");
  bool backendGiven = given("--rdzv-backend");
  useBackend(command, backendGiven ? std::optional<std::string>(r.backend) : env.rdzvBackend,
             backendGiven, o);
  if (env.nprocPerNode && !given("--nproc-per-node")) o->nprocPerNode = *env.nprocPerNode;
  if (env.nnodes && !given("--nnodes")) {
    o->nnodes = *env.nnodes;
    o->minNodes = *env.minNodes < *env.nnodes ? *env.minNodes : 0;
  }
  if (env.nodeRank && !given("--node-rank")) o->nodeRank = *env.nodeRank;
  if (env.maxRestarts && !given("--max-restarts")) o->maxRestarts = *env.maxRestarts;
  if (env.masterAddr && !given("--master-addr") && !endpointGiven) o->masterAddr = *env.masterAddr;
  if (env.masterPort && !given("--master-port") && !endpointGiven) o->masterPort = *env.masterPort;
  if (endpointGiven) {
    useEndpoint(command, r.endpoint, true, o);
  } else if (env.rdzvEndpoint) {
    useEndpoint(command, *env.rdzvEndpoint, false, o);
  }
}

}  // namespace

LaunchFlags::LaunchFlags(CLI::App& command) : command_(command) {
  command.positionals_at_end();  // the worker's own flags are not ours
  command.footer(
      "Starts --nproc-per-node workers of the worker command on this node with\n"
      "torchrun-compatible variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
      "MASTER_ADDR, MASTER_PORT), watches them, and stops them all when one fails.\n"
      "Nodes may run different numbers of workers; ranks are given in node order.\n"
      "Flags not given are read from Kubeflow's PET_* variables (PET_NNODES,\n"
      "PET_NODE_RANK, PET_RDZV_ENDPOINT, ...) and, for the node rank, from an Indexed\n"
      "Job's JOB_COMPLETION_INDEX (+ STRATA_NODE_RANK_OFFSET).\n\n"
      "  strata launch --nproc-per-node N [flags] -- COMMAND ARGS...");
  addFlags(command, given_, rendezvous_);
}

LaunchOptions LaunchFlags::options() const {
  LaunchOptions o = given_;
  // Read even when --timeout overrides it: a typo in the environment is
  // reported where it was made, not ignored.
  std::optional<double> timeout = Timeouts::secondsFromEnvironment();
  if (timeout && command_.count("--timeout") == 0) o.timeoutSeconds = *timeout;
  const char* token = std::getenv("STRATA_JOB_TOKEN");
  if (token && command_.count("--job-token") == 0) o.jobToken = token;
  useClusterEnvironment(command_, rendezvous_, &o);
  checkOptions(command_, o);
  return o;
}

}  // namespace strata

#include "strata/launch/launch_flags.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <optional>
#include <tuple>
#include <utility>

#include "cluster_env.h"
#include "strata/runtime/timeouts.h"
#include "strata/util/cli_flags.h"

namespace strata {
namespace {

constexpr int64_t kMaxPort = 65535;

// --rdzv-endpoint sets what --master-addr and --master-port set, so it
// excludes them rather than letting the order of declaration pick a winner.
void addEndpointFlag(CLI::App& command, LaunchOptions& o, CLI::Option* addr, CLI::Option* port) {
  CLI::callback_t setEndpoint = [&command, &o](const CLI::results_t& values) {
    std::optional<std::pair<std::string, int64_t>> endpoint = parseEndpoint(values.back());
    if (!endpoint)
      throw flagError(command, "--rdzv-endpoint expects HOST:PORT with PORT in [0, " +
                                   std::to_string(kMaxPort) + "], got '" + values.back() + "'");
    std::tie(o.masterAddr, o.masterPort) = *endpoint;
    return true;
  };
  command
      .add_option("--rdzv-endpoint,--rdzv_endpoint", setEndpoint,
                  "rendezvous at node 0's HOST:PORT: --master-addr and --master-port in one")
      ->type_name("HOST:PORT")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->excludes(addr)
      ->excludes(port);
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

void addFlags(CLI::App& command, LaunchOptions& o) {
  addIntFlag(command, "--nproc-per-node,--nproc_per_node", &o.nprocPerNode, "workers on this node",
             1);
  addNodesFlag(command, o);
  addIntFlag(command, "--node-rank,--node_rank", &o.nodeRank, "this node's index in [0, nnodes)",
             0);
  CLI::Option* addr = addTextFlag(command, "--master-addr,--master_addr", &o.masterAddr,
                                  "address of node 0, which serves the rendezvous");
  CLI::Option* port =
      addIntFlag(command, "--master-port,--master_port", &o.masterPort,
                 "rendezvous port; 0 picks a free one (one node only)", 0, kMaxPort);
  addEndpointFlag(command, o, addr, port);
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
  if (o.nnodes > 1 && o.masterPort == 0) {
    throw flagError(command, "--nnodes " + std::to_string(o.nnodes) +
                                 " needs an explicit --master-port (or --rdzv-endpoint) that "
                                 "every node shares");
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

// Kubeflow's PET_* and the Indexed Job's index, for the flags not given.
void useClusterEnvironment(const CLI::App& command, LaunchOptions* o) {
  ClusterEnvironment env = readClusterEnvironment(fromEnvironment);
  auto given = [&](const char* flag) { return command.count(flag) > 0; };
  bool endpointGiven = given("--rdzv-endpoint");
  if (env.nprocPerNode && !given("--nproc-per-node")) o->nprocPerNode = *env.nprocPerNode;
  if (env.nnodes && !given("--nnodes")) {
    o->nnodes = *env.nnodes;
    o->minNodes = *env.minNodes < *env.nnodes ? *env.minNodes : 0;
  }
  if (env.nodeRank && !given("--node-rank")) o->nodeRank = *env.nodeRank;
  if (env.maxRestarts && !given("--max-restarts")) o->maxRestarts = *env.maxRestarts;
  if (env.masterAddr && !given("--master-addr") && !endpointGiven) o->masterAddr = *env.masterAddr;
  if (env.masterPort && !given("--master-port") && !endpointGiven) o->masterPort = *env.masterPort;
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
  addFlags(command, given_);
}

LaunchOptions LaunchFlags::options() const {
  LaunchOptions o = given_;
  // Read even when --timeout overrides it: a typo in the environment is
  // reported where it was made, not ignored.
  std::optional<double> timeout = Timeouts::secondsFromEnvironment();
  if (timeout && command_.count("--timeout") == 0) o.timeoutSeconds = *timeout;
  const char* token = std::getenv("STRATA_JOB_TOKEN");
  if (token && command_.count("--job-token") == 0) o.jobToken = token;
  useClusterEnvironment(command_, &o);
  checkOptions(command_, o);
  return o;
}

}  // namespace strata

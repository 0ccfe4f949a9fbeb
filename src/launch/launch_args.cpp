#include <cstdlib>

#include "strata/launch/launcher.h"
#include "strata/runtime/timeouts.h"
#include "strata/util/flags.h"

namespace strata {
namespace {

FlagSet launchFlags(LaunchOptions& o) {
  FlagSet flags("strata launch",
                "Start --nproc-per-node workers of COMMAND on this node with torchrun-compatible\n"
                "variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,\n"
                "MASTER_PORT), watch them, and stop them all when one fails.\n\n"
                "  strata launch --nproc-per-node N [flags] -- COMMAND ARGS...");
  flags.addInt("nproc-per-node", &o.nprocPerNode, "workers on this node", 1);
  flags.addInt("nnodes", &o.nnodes, "nodes in the job", 1);
  flags.addInt("node-rank", &o.nodeRank, "this node's index in [0, nnodes)", 0);
  flags.addString("master-addr", &o.masterAddr, "address of node 0, which serves the rendezvous");
  flags.addInt("master-port", &o.masterPort, "rendezvous port; 0 picks a free one (one node only)",
               0);
  flags.addInt("max-restarts", &o.maxRestarts, "restart the whole group this many times", 0);
  flags.addDouble("timeout", &o.timeoutSeconds,
                  "seconds any blocking call may wait (STRATA_TIMEOUT for workers)");
  flags.addString("job-token", &o.jobToken,
                  "shared secret; processes without it are refused (default: STRATA_JOB_TOKEN)");
  flags.addInt("threads-per-worker", &o.threadsPerWorker, "intra-op threads per worker", 1);
  return flags;
}

}  // namespace

std::string launchHelp() {
  LaunchOptions defaults;
  return launchFlags(defaults).help();
}

LaunchOptions parseLaunchArgs(const std::vector<std::string>& args, bool* helpRequested) {
  LaunchOptions o;
  if (const char* token = std::getenv("STRATA_JOB_TOKEN")) o.jobToken = token;
  // A malformed STRATA_TIMEOUT is refused even when --timeout overrides it:
  // a typo in the environment is reported where it was made, not ignored.
  if (std::optional<double> timeout = Timeouts::secondsFromEnvironment())
    o.timeoutSeconds = *timeout;
  FlagSet flags = launchFlags(o);
  ParsedArgs parsed = flags.parse(args);
  *helpRequested = parsed.helpRequested;
  if (parsed.helpRequested) return o;
  auto fail = [&](const std::string& why) {
    throw FlagError("strata launch: " + why + " (see 'strata launch --help')");
  };
  if (!parsed.positional.empty()) {
    fail("unexpected argument '" + parsed.positional[0] + "'; put the worker command after --");
  }
  if (parsed.rest.empty()) fail("no worker command: use strata launch [flags] -- COMMAND ARGS...");
  if (o.nodeRank >= o.nnodes) {
    fail("--node-rank " + std::to_string(o.nodeRank) + " is outside [0, --nnodes " +
         std::to_string(o.nnodes) + ")");
  }
  if (o.nnodes > 1 && o.masterPort == 0) {
    fail("--nnodes " + std::to_string(o.nnodes) +
         " needs an explicit --master-port that every node shares");
  }
  if (o.masterPort > 65535) fail("--master-port " + std::to_string(o.masterPort) + " > 65535");
  if (!(o.timeoutSeconds > 0)) fail("--timeout must be a positive number of seconds");
  o.command = parsed.rest;
  return o;
}

}  // namespace strata

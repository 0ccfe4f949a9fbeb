// This process's place in the job, from torchrun-compatible variables.
//
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// plus STRATA_JOB_TOKEN, STRATA_FLIGHT_DIR, STRATA_RESTART_ATTEMPT (torchrun's
// TORCHELASTIC_RESTART_COUNT is read too) and STRATA_NODE_SIZES, the workers
// of each node in node order ("3,2"), which `strata launch` sets because
// nodes may differ in size. A job started by Slurm's srun or Open MPI's
// mpirun is read from their variables instead (src/runtime/scheduler_env.h). With none set the
// process is a job of one. Parsing throws ConfigError naming the variable and its value; it never
// blocks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace strata {

struct ProcessEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  int localWorldSize = 1;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  std::string jobToken;  // empty: no token
  int restartAttempt = 0;
  // True when a launcher already hosts the rendezvous store, so rank 0 joins
  // as a client instead of serving it (set by `strata launch`).
  bool storeHostedByLauncher = false;
  // Workers per node, in node order; ranks are given in node order. Without
  // STRATA_NODE_SIZES: equal nodes of LOCAL_WORLD_SIZE when it divides
  // WORLD_SIZE, else empty (unknown).
  std::vector<int> nodeSizes;
  // Where this rank's flight recorder file goes (flight_recorder.h); empty:
  // no recorder. `strata launch` sets it for every worker.
  std::string flightDir;
  // A rehearsal hook for straggler detection: STRATA_DEBUG_SLOW_RANK=R:S
  // makes rank R's trainer wait S seconds in every layer's forward, so R is
  // slower than its peers. -1: no rank.
  int debugSlowRank = -1;
  double debugSlowSeconds = 0;

  // Looks variables up with `lookup` (std::getenv by default, a map in tests).
  using Lookup = std::function<std::optional<std::string>(const std::string&)>;
  static ProcessEnv fromEnvironment();
  static ProcessEnv fromLookup(const Lookup& lookup);
};

}  // namespace strata

// `strata launch`'s command line, declared on CLI11 (util/cli_flags.h).
//
// Nothing here blocks; what throws is said at each function.
#pragma once

#include "strata/launch/launcher.h"

namespace CLI {
class App;
}  // namespace CLI

namespace strata {

// The flags of `strata launch`, in Strata's spelling and torchrun's
// (--nproc_per_node, --node_rank, --master_addr, --rdzv-endpoint HOST:PORT,
// ...). The worker command is everything after `--`, or from the first
// argument that is not a flag, as torchrun takes its script.
class LaunchFlags {
 public:
  // Declares the flags on `command`; the parse writes into this object, so it
  // stays where it is until the parse is over.
  explicit LaunchFlags(CLI::App& command);
  LaunchFlags(const LaunchFlags&) = delete;
  LaunchFlags& operator=(const LaunchFlags&) = delete;

  // After the parse: the flags given, with STRATA_JOB_TOKEN and
  // STRATA_TIMEOUT standing in for --job-token and --timeout when those are
  // not given, and a cluster's variables for the node's place in the job
  // (src/launch/cluster_env.h: Kubeflow's PET_*, JOB_COMPLETION_INDEX).
  // Throws FlagError for options that do not fit together or no worker
  // command, and ConfigError naming STRATA_TIMEOUT (even when --timeout is
  // given) or a cluster variable, with its text, when it is malformed.
  LaunchOptions options() const;

  // --rdzv-backend and --rdzv-endpoint as given: what the endpoint means
  // depends on the backend, so both are read after the parse.
  struct Rendezvous {
    std::string backend, endpoint;
  };

 private:
  const CLI::App& command_;
  LaunchOptions given_;
  Rendezvous rendezvous_;
};

}  // namespace strata

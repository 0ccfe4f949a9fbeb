// `strata k8s`: print the Kubernetes manifests that run a `strata train`
// config on a cluster (strata/deploy/k8s_manifests.h), as YAML for
// `kubectl apply -f -`, or with --output json as one List.
//
// Never blocks. Reads the config file; its run prints to `out` and returns
// 0, or 2 for invalid input (a missing or unreadable config, one that does
// not parse or does not fit the nodes and workers, a bad count, name,
// quantity or flavor), with the reason on `err`. Notes that need no action
// (checkpoints only at the end of the run) go to `err` too.
#pragma once

#include <iosfwd>

#include "strata/util/command_line.h"

namespace strata {

// Declares `strata k8s` on `strata`; `out` and `err` must outlive its run.
Subcommand addK8sCommand(CLI::App& strata, std::ostream& out, std::ostream& err);

}  // namespace strata

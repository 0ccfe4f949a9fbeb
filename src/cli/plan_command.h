// `strata plan`: choose the parallel layout of a GPT model on a cluster and
// predict throughput, memory per device and time to train; or, with
// --layout, predict one fixed layout (`--layout config`: the one of the
// strata train config given with --config). The model is a preset, a
// config's, a measured profile's or given size by size (plan_job.h).
//
// Never blocks. Its run prints to `out` and returns 0 on success; 2 for
// invalid input (an unknown preset, an unreadable cluster or config file,
// sizes that make no model, a layout that does not fit the job, a cluster
// too small for the model, a batch no layout divides), with the reason on
// `err`.
#pragma once

#include <iosfwd>

#include "plan_job.h"
#include "strata/util/command_line.h"

namespace strata {

// Declares `strata plan` on `strata`; `out` and `err` must outlive its run.
// `initFromModel` reads the model of a --config file's init_from weights
// (unset: the file's [model] alone).
Subcommand addPlanCommand(CLI::App& strata, std::ostream& out, std::ostream& err,
                          ConfigModelReader initFromModel = nullptr);

}  // namespace strata

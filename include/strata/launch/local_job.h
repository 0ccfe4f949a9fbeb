// A program that is its own launcher, as the examples are.
//
// Run directly, runAsLocalJob starts `workers` copies of this program as one
// job on this host (runLauncher, launcher.h) and blocks until the job ends,
// returning the launcher's exit code (0 when every worker returned 0). Started
// by a launcher instead (`strata launch` or torchrun: RANK is set), the
// process is one of those workers: it runs `worker` and returns its result.
// `timeoutSeconds` bounds every wait of the workers' communication
// (STRATA_TIMEOUT), so a stalled worker fails the job rather than hanging it.
#pragma once

#include <functional>

namespace strata {

int runAsLocalJob(int workers, const std::function<int()>& worker, double timeoutSeconds = 60);

}  // namespace strata

// What the launcher says when workers of an attempt fail: which failure to
// blame and why. When one worker fails its peers usually fail moments later
// because of it (Strata's communicators say so in their messages: a timeout,
// or "a peer exited"); those are echoes, and the cause is the first failure
// that is not one. Reads the workers' states only; nothing blocks or throws.
#pragma once

#include <string>
#include <vector>

#include "worker_group.h"

namespace strata {

// "rank 1 (local rank 1) failed with exit code 3": the cause the report opens
// with, repeated when the launcher gives up. `failures`: indices into
// group.workers(), at least one.
std::string failureCause(const WorkerGroup& group, const std::vector<int>& failures);

// The report of a failed attempt: the cause and how long the worker ran, the
// workers that failed because of it, the ones still running when the cause
// was an echo (likely stalled), and the last lines of the blamed worker's
// stderr.
std::string describeFailure(const WorkerGroup& group, const std::vector<int>& failures);

}  // namespace strata

// Internal: one pipeline rank's memory over a step, as memory.h counts it,
// for cost_model.cpp and search.cpp.
#pragma once

#include "stage_costs.h"
#include "strata/plan/memory.h"
#include "strata/schedule/schedule.h"

namespace strata::plan {

// A rank's parameters, gradients and optimizer state between steps.
MemoryBreakdown rankModelState(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                               int rank);

// The most `rank` holds at once in a step of `pipeline`: its model state
// and, at the moment it peaks, its stashes and buffers.
MemoryBreakdown rankMemory(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                           const schedule::Schedule& pipeline, int rank);

}  // namespace strata::plan

// Internal: the time ZeRO-3's gathers and reduce-scatters leave exposed on
// one pipeline rank (cost_model.h gives the model).
#pragma once

#include "stage_costs.h"

namespace strata::plan {

// Seconds of a step that ZeRO-3's collectives add on `rank`, the wait for
// the slowest replica aside.
double fullyShardedExposed(const TrainingJob& job, const Layout& l, const StagePlan& plan, int rank,
                           int microBatches);

}  // namespace strata::plan

// Internal: ZeRO-3 gathered tensor by tensor, as DeepSpeed's stage 3 does
// (cost_model.h's Framework::zero3Gathering), timed on one pipeline rank.
#pragma once

#include "stage_costs.h"

namespace strata::plan {

// Seconds of a step that the rank's tensor-by-tensor gathers and gradient
// reduce-scatters add to its compute, the wait for the slowest replica aside.
double tensorGathersExposed(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                            int rank, int microBatches);

}  // namespace strata::plan

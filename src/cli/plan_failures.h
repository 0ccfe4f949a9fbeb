// strata plan's failures: the best layout's time to train when devices fail
// (strata/plan/failures.h), with checkpoint-restart and with in-job
// recovery, and with --simulate-failures the spread of whole runs.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "strata/plan/cost_model.h"

namespace strata {

// The lines under the table; `simulatedRuns` > 0 adds the simulation's.
void printFailures(std::ostream& out, const plan::TrainingJob& job, const plan::Estimate& e,
                   int simulatedRuns);

// The same figures as JSON fields of `line`.
void addFailureFields(nlohmann::ordered_json& line, const plan::TrainingJob& job,
                      const plan::Estimate& e);

}  // namespace strata

// strata plan's failures: the best layout's time to train when devices fail
// (strata/plan/failures.h), with checkpoint-restart and with in-job
// recovery, and with --simulate-failures the spread of whole runs.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "strata/plan/cost_model.h"
#include "strata/plan/failures.h"

namespace strata {

// The failure model's inputs for `e` on `job`'s cluster: the save's stall is
// the checkpoint (every weight and the trained ones' optimizer state, each
// byte once) over the storage rate of the nodes the layout uses, each
// writing its share.
plan::FailureInputs failureInputs(const plan::TrainingJob& job, const plan::Estimate& e);

// Whether the job can say anything about failures: a token count (days to
// train) and a failure rate.
bool plansFailures(const plan::TrainingJob& job, const plan::Estimate& e);

// The lines under the table; `simulatedRuns` > 0 adds the simulation's.
void printFailures(std::ostream& out, const plan::TrainingJob& job, const plan::Estimate& e,
                   int simulatedRuns);

// The same figures as JSON fields of `line`.
void addFailureFields(nlohmann::ordered_json& line, const plan::TrainingJob& job,
                      const plan::Estimate& e);

}  // namespace strata

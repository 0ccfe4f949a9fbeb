// `strata train`: train a GPT over any pp x dp x tp layout (see trainer.h).
#pragma once

#include <string>
#include <vector>

namespace strata {

// Returns 0 on success, 2 for bad flags or configuration (the same on every
// rank), 1 for a failure while training.
int trainCommand(const std::vector<std::string>& args);

}  // namespace strata

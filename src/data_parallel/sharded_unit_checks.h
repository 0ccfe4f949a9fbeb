// Checks of the units handed to FullyShardedDataParallel, before any
// communication, so that every rank rejects a bad list alike.
#pragma once

#include <vector>

#include "strata/data_parallel/fully_sharded.h"
#include "strata/runtime/communicator.h"

namespace strata::data_parallel {

// Throws ConfigError naming the unit and parameter: no units, a unit without
// parameters, a parameter undefined, a trained one not requiring grad or a
// frozen one requiring it, not a leaf, listed twice, or of another dtype or
// device than the first of its kind.
void checkUnits(const std::vector<ShardedUnit>& units, const Communicator& comm);

}  // namespace strata::data_parallel

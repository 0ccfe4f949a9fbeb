// Every rank of a job must train the same configuration. A rank started with
// another --hidden would build a different model and fail, or wait forever,
// deep inside the first collective; this check names the difference first.
//
// checkSameConfigOnEveryRank() is a collective over `world`: it blocks in an
// all-gather of one fingerprint per rank and, only when they differ, in two
// broadcasts of configuration text; every wait is bounded by the
// communicator's timeout (TimeoutError, PeerError). It throws ConfigError on
// every rank alike, naming the ranks that differ from rank 0 and each option
// in which the first of them differs.
#pragma once

#include "strata/config/config.h"
#include "strata/runtime/communicator.h"

namespace strata::train {

void checkSameConfigOnEveryRank(const TrainConfig& config, Communicator& world);

}  // namespace strata::train

// The layout map of a job: for every global rank, its node and its
// pipeline stage, data-parallel replica, context-parallel share and
// tensor-parallel slice, with ranks assigned in node order (node 0's workers
// first) and coordinates from ParallelLayout (strata/runtime/layout.h: tp
// fastest, then cp, then dp, then pp).
//
// Written as JSON, compact enough to be a Kubernetes annotation:
//   {"world_size":4,"pp":2,"dp":1,"cp":1,"tp":2,
//    "nodes":[{"node":0,"first_rank":0,"workers":2},...],
//    "columns":["node","pp","dp","cp","tp"],"ranks":[[0,0,0,0,0],[0,0,0,0,1],...]}
// where ranks[r] describes global rank r.
//
// Nothing blocks. Throws ConfigError naming pp, dp, cp, tp and the world
// size when they do not multiply up to it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "strata/config/config.h"

namespace strata::deploy {

nlohmann::ordered_json layoutMap(const train::ParallelConfig& parallel,
                                 const std::vector<int64_t>& workersPerNode);

}  // namespace strata::deploy

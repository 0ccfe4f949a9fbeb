// The layout of a job that restarted on another number of ranks (an elastic
// `strata launch --nnodes MIN:MAX` after a node failed or came back).
//
// Policy `parallel.elastic` (`--elastic-policy`):
//   "off" (default): the layout is what the configuration says; a world of
//     another size is a ConfigError, as ever.
//   "dp": keep pp, cp and tp, give data parallelism whatever the world
//     allows (dp = world / (pp x cp x tp)), and keep the global batch by changing the
//     micro-batches per replica (global batch / (micro_batch x dp)).
// Nothing blocks; a world the policy cannot fit throws ConfigError naming the
// world size and every factor.
#pragma once

#include <string>

#include "strata/config/config.h"

namespace strata::train {

struct FittedLayout {
  TrainConfig config;
  std::string note;  // what changed and why, for every rank's log; empty when nothing did
};

FittedLayout fitLayoutToWorld(const TrainConfig& config, int worldSize);

}  // namespace strata::train

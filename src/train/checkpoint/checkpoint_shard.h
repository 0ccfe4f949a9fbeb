// One rank's shard as bytes: RankState <-> a LibTorch archive.
//
// Nothing blocks. parseShard throws CheckpointError naming `origin` when the
// bytes are not a shard or do not fit the model or optimizer.
#pragma once

#include <string>

#include "strata/train/checkpoint/checkpoint.h"

namespace strata::train {

std::string serializeShard(const RankState& state);
void parseShard(const std::string& bytes, const std::string& origin, RankState& state);

}  // namespace strata::train

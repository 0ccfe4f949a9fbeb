// One rank's shard: RankState <-> a LibTorch archive.
//
// serializeShard passes the archive's bytes to `sink` in order, as LibTorch
// produces them, so a shard is written and hashed without ever being whole
// in memory. Should `sink` throw, it receives nothing more and its exception
// is rethrown once LibTorch has finished the archive. readShardFile throws
// CheckpointError naming `path` when the file is not a shard or does not fit
// the model or optimizer. AdamW's state is stored by parameter
// (adamw_state.h), any other optimizer's as LibTorch serialises it. Nothing blocks but the sink and
// the file reads.
#pragma once

#include <torch/serialize/input-archive.h>

#include <cstddef>
#include <functional>
#include <string>

#include "strata/train/checkpoint/checkpoint.h"

namespace strata::train {

using ByteSink = std::function<void(const void* data, std::size_t size)>;

void serializeShard(const RankState& state, const ByteSink& sink);
void readShardFile(const std::string& path, RankState& state);
// What every shard holds alike: the LR-schedule step, the data position and
// the CPU generator (a resharded load takes them from the first shard it reads).
void readRunState(torch::serialize::InputArchive& archive, RankState& state);

}  // namespace strata::train

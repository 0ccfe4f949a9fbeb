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
#include <torch/serialize/output-archive.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strata/checkpoint/checkpoint.h"

namespace strata::train {

using ByteSink = std::function<void(const void* data, std::size_t size)>;

void serializeShard(const RankState& state, const ByteSink& sink);
// The shard as an archive over copies of the state's tensors, taken now:
// writeShardArchive(*archive), later and on any thread, writes what
// serializeShard would have written now, byte for byte, whatever training
// did since. Copies host memory the size of the shard's tensors;
// CheckpointError for an optimizer other than AdamW (LibTorch's own
// serialisation holds the live tensors).
struct ShardSnapshot {
  std::vector<at::Tensor> copies;  // referenced while the archive is, as the originals are
  std::unique_ptr<torch::serialize::OutputArchive> archive;
};
std::unique_ptr<ShardSnapshot> snapshotShard(const RankState& state);
// Writes an archive through `sink`, as serializeShard does.
void writeShardArchive(torch::serialize::OutputArchive& archive, const ByteSink& sink);
void readShardFile(const std::string& path, RankState& state);
// What every shard holds alike: the LR-schedule step, the data position and
// the CPU generator (a resharded load takes them from the first shard it
// reads), each read as `read` returns the tensor at its key.
using ShardTensorReader = std::function<at::Tensor(const std::string& key)>;
void readRunState(const ShardTensorReader& read, RankState& state);

}  // namespace strata::train

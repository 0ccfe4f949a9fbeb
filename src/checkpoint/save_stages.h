// The stages of a checkpoint save, shared by the synchronous save
// (saveCheckpoint) and the asynchronous one (async_checkpoint.h):
//
//   beginSave     collective: every rank fixes what the save records and the
//                 step directory is made (and a stale COMPLETE removed)
//   (each rank writes its shard: at once, or on a background thread)
//   completeSave  collective: the ranks agree that every shard is durable,
//                 then rank 0 writes metadata.toml and, last, COMPLETE
//
// Both throw CheckpointError, the same on every rank, naming the first
// failing rank and why; completeSave removes the step directory of a failed
// save first. They block in `world`'s collectives (its timeouts apply) and on
// disk I/O.
#pragma once

#include <cstdint>
#include <string>

#include "strata/checkpoint/checkpoint.h"

namespace strata::train {

// What a save records, fixed when it begins.
struct SaveTicket {
  std::string dir;
  int64_t step = 0;
  std::string stepDir;
  int worldSize = 1;
  ParallelDegrees degrees;
  std::string configToml;
  int64_t shardedOptimizers = 0;
  bool fullySharded = false;
  std::string indexToml;  // this rank's pieces of the tensor index
};

SaveTicket beginSave(const std::string& dir, int64_t step, const ParallelLayout& layout,
                     const std::string& configToml, const RankState& state, Communicator& world);

// The record of a shard not (yet) written: its name, no bytes.
ShardRecord unwrittenShard(int rank);

// `writeProblem` is empty when this rank's shard `mine` is durable, else why not.
void completeSave(const SaveTicket& ticket, const ShardRecord& mine,
                  const std::string& writeProblem, Communicator& world);

}  // namespace strata::train

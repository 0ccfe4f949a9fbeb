// Checkpoints written while training goes on (`--checkpoint-async`).
//
// start() copies this rank's state into host memory (model, AdamW or ZeRO
// shards; with LR step, data position and generator) and hands it to a
// background thread, which serializes it into the archive saveCheckpoint
// would have written, byte for byte, and writes, hashes and fsyncs it; the
// training loop goes on meanwhile.
// The save completes, as a synchronous one does, only once every rank's
// shard is durable: then rank 0 writes metadata.toml and, last, COMPLETE. A
// crash at any moment before that leaves a step directory without COMPLETE,
// which no resume loads. At most one save is in flight.
//
// The cost is a copy of this rank's state in host memory while its write
// runs, the copying at start(), and one small all-reduce per poll. Failures (a full disk) surface
// at completion as the synchronous save's CheckpointError, the same on every rank, with the partial
// step directory removed.
//
// Collective: start, poll and finish are called by every rank of `world` at
// the same points of training (the checkpoint steps and each step after);
// they block in its collectives (TimeoutError, PeerError) and finish also
// until this rank's write is done.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "strata/checkpoint/checkpoint.h"

namespace strata::train {

class AsyncCheckpoint {
 public:
  AsyncCheckpoint();
  // Waits for a write still running but never completes its save: an
  // incomplete save stays invisible.
  ~AsyncCheckpoint();
  AsyncCheckpoint(const AsyncCheckpoint&) = delete;
  AsyncCheckpoint& operator=(const AsyncCheckpoint&) = delete;

  // Begins the checkpoint of `step`: makes the step directory (collective),
  // snapshots `state` and starts writing it. Error when a save is in flight
  // (finish() it first); CheckpointError when the directory cannot be made.
  void start(const std::string& dir, int64_t step, const ParallelLayout& layout,
             const std::string& configToml, const RankState& state, Communicator& world);

  bool inFlight() const;
  // The step of the save in flight; only when inFlight().
  int64_t step() const;

  // With a save in flight: completes it and returns its step when every
  // rank's shard is durable, else nullopt without waiting. Without one:
  // nullopt, and no communication.
  std::optional<int64_t> poll(Communicator& world);
  // Waits for this rank's write, then completes the save in flight and
  // returns its step; nullopt when none is in flight.
  std::optional<int64_t> finish(Communicator& world);

 private:
  struct Save;
  std::unique_ptr<Save> save_;
};

}  // namespace strata::train

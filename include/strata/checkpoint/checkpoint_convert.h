// `strata checkpoint convert`: rewrites a checkpoint for another layout
// offline, in one process. Each pipeline and tp rank of the new layout is
// rebuilt in turn (its stages of the model at its tp shard; the other blocks
// as empty shapes), filled through the old checkpoint's tensor index from the
// shards that overlap it, and written as that rank's shard; its data-parallel
// replicas' shards, the same to the byte, are copies of it. Then the metadata
// and COMPLETE, each atomically as a save writes them. The optimizer state is
// written as plain AdamW by parameter: a ZeRO run loads it through the index.
// No two ranks' state is held at once.
//
// Throws ConfigError for a layout the model cannot take (validated as
// `strata train` would) and for a `to` whose step directory is the source's
// or already holds a complete checkpoint (before anything is written);
// CheckpointError for a format-1 checkpoint or any read or write failure.
// Nothing blocks but the file I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace strata::train {

struct ConvertOptions {
  std::string from;  // a checkpoint folder (its latest complete step) or a step directory
  std::string to;    // a checkpoint folder: the result is to/step-NNNNNN
  int64_t pp = 1, dp = 1, tp = 1;
  int64_t virtualStages = 1;
  // The schedule and batch the new layout is validated with and its config
  // records; empty or unset: the source run's (a run resumed from it may use
  // another batch). The schedule places the stages (a V schedule's two on a
  // rank), so it must be the one the resumed run uses.
  std::string schedule;
  std::optional<int64_t> globalBatch, microBatch;
  // Called after each rank's shard is written, with a line that names it
  // ("shard 3 of 8: rank-00002.pt (12.4 MB)"); may be empty.
  std::function<void(const std::string&)> progress;
};

// Returns the step directory written.
std::string convertCheckpoint(const ConvertOptions& options);

}  // namespace strata::train

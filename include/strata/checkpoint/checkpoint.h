// Checkpoints that survive crashes: a save is either complete and loads, or
// is invisible.
//
// Layout on disk (DIR must be on a filesystem every rank writes to):
//   DIR/step-000100/rank-00000.pt ... rank-NNNNN.pt   one shard per rank
//   DIR/step-000100/metadata.toml                     step, layout, config,
//                                                     size + SHA-256 per shard,
//                                                     the writer's Strata version
//   DIR/step-000100/COMPLETE                          SHA-256 of metadata.toml
// Every file is written to a temporary name, fsynced, renamed into place and
// its directory fsynced (atomic_file.h). COMPLETE is written last, after
// every shard and the metadata, so a step directory without it is a save
// that did not finish and findLatestComplete() skips it.
//
// A shard is a LibTorch archive (torch::serialize::OutputArchive, the format
// of torch::save) holding the model's parameters and buffers, the
// optimizer's state as LibTorch's own optimizer serialisation writes it (or,
// under ZeRO, this rank's shard of each sharded optimizer's state), the
// LR-schedule step, the data position and the default CPU generator's
// state. Using LibTorch's archive rather than our own format keeps the
// optimizer state in the layout LibTorch itself reads back, for every
// optimizer, across LibTorch versions. The SHA-256 is over the whole shard
// file, so corruption anywhere, and truncation, is caught before parsing.
//
// Every rank writes its own shard, data-parallel replicas included: simple,
// and any rank can restore alone, at the cost of dp copies of the weights.
//
// Resharding (format 2): metadata.toml also holds the tensor index
// (tensor_index.h), one entry per piece of every global tensor (parameters
// and AdamW's moments, ZeRO's flat shards mapped back to their parameters).
// A run of another layout, or another --zero, loads through it: each rank
// reads only the shard files that hold a piece it needs (each file whole:
// LibTorch's archive has no partial reads), one file at a time. Format-1
// checkpoints load into their own layout only.
//
// saveCheckpoint is collective: it blocks in `world`'s all-gather and
// barriers (bounded by the communicator's timeouts: TimeoutError,
// PeerError). Loading never communicates. Every I/O or integrity failure
// throws CheckpointError naming the file (and expected vs actual checksum
// or size).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/checkpoint/lr_state.h"
#include "strata/checkpoint/tensor_index.h"
#include "strata/data/batch_reader.h"
#include "strata/error.h"
#include "strata/runtime/layout.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace strata {
class Communicator;
}
namespace strata::data_parallel {
class ShardedOptimizerState;
}

namespace strata::train {

// One of this rank's parameters as the tensor index sees it.
struct IndexedParameter {
  std::string name;                  // in the whole model: "block0.attn.qkv.weight"
  at::Tensor tensor;                 // this rank's: the whole tensor or its tp shard
  int64_t shardDim = -1;             // split over tp along this dimension; -1: replicated
  std::vector<int64_t> globalShape;  // the serial, unpadded parameter's
  // Whether this copy is the one indexed: the first tp rank's of a replicated
  // parameter, the first stage's of a tied one (data parallelism aside).
  bool primary = true;
};

// What one rank saves and restores. The pointers must outlive the call. A
// run has `optimizer` or, under ZeRO, `shardedOptimizers`. Without
// `parameters` a checkpoint loads into its own layout and --zero only
// (CheckpointError otherwise) and a save writes no tensor index.
struct RankState {
  torch::nn::Module* model = nullptr;
  torch::optim::Optimizer* optimizer = nullptr;
  LrState lr;
  DataPosition data;
  std::vector<data_parallel::ShardedOptimizerState*> shardedOptimizers = {};
  // ZeRO-3: the sharded optimizers' state is cut per parameter piece, not
  // per bucket, so it loads from another ZeRO stage through the index only.
  bool fullySharded = false;
  std::vector<IndexedParameter> parameters = {};  // this rank's, each once
  int tpRank = 0;
  // Among the ranks that hold the same parameters (dp, or dp x cp under
  // context parallelism): replica 0 indexes the parameters, every replica
  // its ZeRO chunks.
  int dpRank = 0;
  // Among the ranks that hold the same routed experts (expert parallelism:
  // dp x cp / ep of them; dpRank without it): replica 0 indexes them.
  int expertDpRank = 0;
  // Which of the model's top-level children (its layers) this rank holds,
  // by index; empty: all of them. A pipeline rank keeps only its stages'
  // layers (the trainer releases the others' weights), so its shard saves
  // those and loads those.
  std::vector<bool> heldLayers = {};
};

struct ShardRecord {
  std::string file;  // relative to the step directory
  int64_t bytes = 0;
  std::string sha256;  // lower-case hex
};

struct CheckpointInfo {
  int64_t step = 0;
  int worldSize = 1;
  ParallelDegrees degrees;
  std::string configToml;           // the run's TrainConfig (config_file.h)
  std::vector<ShardRecord> shards;  // indexed by global rank
  int64_t format = 2;               // 1: no tensor index
  int64_t shardedOptimizers = 0;    // per rank: ZeRO's, 0 without ZeRO
  bool fullySharded = false;        // ZeRO-3 wrote it (RankState::fullySharded)
  std::vector<TensorPiece> pieces = {};
  // The Strata version that wrote the checkpoint, filled in by reading it;
  // empty for checkpoints older than Strata 0.5.0, which did not record it.
  // Writing always records the writer's own version (strata/version.h).
  std::string strataVersion = {};
};

// DIR/step-NNNNNN (at least six digits).
std::string stepDirectory(const std::string& dir, int64_t step);

// Collective over `world`, the whole job's communicator (its ranks are the
// global ranks), all ranks with the same step: every rank writes its shard,
// then rank 0 writes the metadata and COMPLETE; returns once the checkpoint is
// complete on disk. A COMPLETE left in the step directory by an earlier save
// is removed before any shard is overwritten.
//
// A save that fails on any rank (a full disk, an I/O error) fails on every
// rank alike with one CheckpointError naming the first failing rank and its
// reason; the step directory is removed and earlier checkpoints are left
// intact.
void saveCheckpoint(const std::string& dir, int64_t step, const ParallelLayout& layout,
                    const std::string& configToml, const RankState& state, Communicator& world);

// Collective over `world`: every rank creates `dir` if needed and writes and
// removes a small file there, so an unwritable folder is reported before
// training rather than at the first save. Throws CheckpointError (the same on
// every rank) naming the folder, the first failing rank and why.
void checkCheckpointDirectory(const std::string& dir, Communicator& world);

// Keeps the `keep` newest complete checkpoints in `dir` and removes every
// step directory older than the oldest of them (complete or not); does
// nothing when `keep` is 0 or no more are complete. Not collective: one rank
// calls it after a save returned. Returns the removed directories; throws
// CheckpointError naming one it cannot remove.
std::vector<std::string> pruneCheckpoints(const std::string& dir, int64_t keep);

// The building blocks saveCheckpoint runs, for tests and tools.
ShardRecord writeShard(const std::string& stepDir, int rank, const RankState& state);
// Writes rank `rank`'s shard as a copy of `from` (a shard in the same step
// directory), atomically; for ranks whose state is the same to the byte.
// Throws CheckpointError when the copy's size or SHA-256 is not `from`'s.
ShardRecord copyShard(const std::string& stepDir, const ShardRecord& from, int rank);
void writeMetadataAndMarker(const std::string& stepDir, const CheckpointInfo& info);

// The complete step directory with the highest step under `dir`, or nullopt
// when there is none (or `dir` does not exist).
std::optional<std::string> findLatestComplete(const std::string& dir);
// Reads and checks metadata.toml against COMPLETE.
CheckpointInfo readCheckpointInfo(const std::string& stepDir);
// Restores `state`, including the default CPU generator. In the layout and
// --zero that wrote it, and with `sameHoldings` (this rank holds the pipeline
// layers and experts that the rank which wrote its shard held), from this
// rank's own shard; otherwise through the tensor index, from the shards that
// overlap this rank (loadResharded). A shard holds the layers and experts its
// rank trained (an older one the whole model, the other layers at their
// initial values), so a rank whose layers or experts moved (another number of
// virtual stages, another ep) must not read its own. Every shard read is
// verified first (size, SHA-256). Throws CheckpointError for a format-1
// checkpoint of another layout or cut, or when the index lacks a tensor or
// has it in another shape (naming both shapes).
CheckpointInfo loadCheckpoint(const std::string& stepDir, const ParallelLayout& layout, int rank,
                              RankState& state, bool sameHoldings = true);
// The resharding half of loadCheckpoint, for tools (strata checkpoint
// convert): `state.parameters` say what this rank holds.
void loadResharded(const std::string& stepDir, const CheckpointInfo& info, RankState& state);
// Verifies one shard file against its record (size, SHA-256).
void verifyShard(const std::string& stepDir, const ShardRecord& record);
// The pieces of `state` that a save into `file` indexes (tensor_index.h).
std::vector<TensorPiece> indexShard(const RankState& state, const std::string& file);

}  // namespace strata::train

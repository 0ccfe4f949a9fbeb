// The tensor index of a checkpoint: where every piece of every global tensor
// lives, so a checkpoint written under one layout loads into another.
//
// A global tensor is one parameter of the whole (serial, unpadded) model, or
// one of AdamW's moments of it, by kind. Each shard file holds pieces of it:
// a block of the global tensor at `offset` whose first `length` elements
// along every dimension are valid (the rest, a tp shard's vocabulary
// padding, is not part of the model). A piece is stored either as a whole
// tensor under `key` (parameters, plain AdamW moments) or, under ZeRO, as a
// run of a flat 1-D tensor: `block` elements starting at `keyOffset`, in
// row-major order. Only one copy of each piece is indexed: data-parallel
// replicas, tensor-parallel replicas and the second copy of a tied weight
// are not. Pure data and arithmetic: nothing here blocks or throws but
// parseTensorIndex (CheckpointError naming the metadata file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::train {

// The kinds of global tensor a checkpoint indexes.
constexpr const char* kParameterKind = "parameter";
constexpr const char* kExpAvgKind = "exp_avg";
constexpr const char* kExpAvgSqKind = "exp_avg_sq";

struct TensorPiece {
  std::string tensor;               // "block0.attn.qkv.weight"
  std::string kind;                 // kParameterKind, kExpAvgKind or kExpAvgSqKind
  std::vector<int64_t> shape;       // the global tensor's
  std::string dtype;                // "float32", ...
  int64_t step = 0;                 // moments: AdamW's step count
  std::string file;                 // relative to the step directory
  std::string key;                  // '/'-separated path in the shard's archive
  std::vector<int64_t> offset;      // the block's first element in the global tensor
  std::vector<int64_t> length;      // valid elements from offset, per dimension
  bool flat = false;                // stored as a run of a 1-D tensor
  int64_t keyOffset = 0;            // flat: the run's first element in the stored tensor
  std::vector<int64_t> block = {};  // flat: the run's shape (length clipped from it)
};

// A row-major run [begin, end) of a tensor of `shape`, cut into blocks that
// are each contiguous in the run: a partial first row, whole rows, a partial
// last row, recursively. `start` is the block's first element in the run's
// tensor (row-major index).
struct RunBlock {
  std::vector<int64_t> offset, shape;
  int64_t start = 0;
};
std::vector<RunBlock> splitRun(const std::vector<int64_t>& shape, int64_t begin, int64_t end);

// The pieces as metadata.toml tables, one per piece, numbered in order.
std::string tensorIndexToml(const std::vector<TensorPiece>& pieces);
// Every piece in a metadata.toml text (none in a format-1 checkpoint).
std::vector<TensorPiece> parseTensorIndex(const std::string& metadata, const std::string& path);

// "[2, 3]"
std::string shapeText(const std::vector<int64_t>& shape);

}  // namespace strata::train

// Reads global batches of windows, each replica its own part, in an order
// fixed by the seed, with a position that can be saved and restored exactly.
//
// Order: epoch e visits the windows in a permutation seeded by (seed, e)
// (identity when shuffle is off). Global batch b of the epoch is positions
// [b*G, (b+1)*G) of that order; the last N mod G windows of an epoch are
// skipped, so every global batch is full. The generator is our own
// (random.h), so the order is the same on every platform.
//
// Sharding policy: replica r of R reads the contiguous slice
// [r*G/R, (r+1)*G/R) of each global batch. Concatenating the replicas'
// batches in replica order gives exactly the global batch one process reads,
// which is what lets an R-replica run equal a single-process run.
//
// Nothing blocks or communicates. The constructor throws ConfigError naming
// the values when G < 1, R < 1, r is outside [0, R), R does not divide G, or
// the dataset holds fewer than G windows; seek() throws for a negative
// position or one past the epoch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/data/text_dataset.h"

namespace strata::train {

// The next global batch to read: batch `batch` of epoch `epoch`.
struct DataPosition {
  int64_t epoch = 0;
  int64_t batch = 0;
  bool operator==(const DataPosition& other) const {
    return epoch == other.epoch && batch == other.batch;
  }
};

struct ReaderOptions {
  int64_t globalBatch = 1;  // windows per optimizer step, over all replicas
  int replicas = 1;
  int replica = 0;
  uint64_t seed = 0;
  bool shuffle = true;
  // What to change, appended to the error when the data holds fewer windows
  // than one global batch (the caller knows its config's keys).
  std::string tooLittleData;
};

class BatchReader {
 public:
  BatchReader(WindowDataset dataset, ReaderOptions options);

  // This replica's part of the next global batch, [G/R, S] each, and advances.
  Batch next();
  // The window indices next() would return, without advancing.
  std::vector<int64_t> peekIndices() const;

  DataPosition position() const { return position_; }
  void seek(DataPosition position);
  int64_t batchesPerEpoch() const { return batchesPerEpoch_; }
  int64_t localBatch() const { return options_.globalBatch / options_.replicas; }

 private:
  const std::vector<int64_t>& order(int64_t epoch) const;

  WindowDataset dataset_;
  ReaderOptions options_;
  int64_t batchesPerEpoch_;
  DataPosition position_;
  mutable int64_t cachedEpoch_ = -1;
  mutable std::vector<int64_t> cachedOrder_;
};

}  // namespace strata::train

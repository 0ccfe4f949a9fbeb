// Opening a checkpoint to rebuild its tensors in another layout (`strata
// checkpoint convert`, `strata export`): its complete step directory, its
// metadata and the config its run saved. Reads files only; throws
// CheckpointError for an incomplete or format-1 checkpoint (one from before
// the tensor index, which nothing can reshard) and ConfigError for a saved
// config this Strata cannot read.
#pragma once

#include <string>

#include "strata/checkpoint/checkpoint.h"
#include "strata/config/config.h"

namespace strata::train {

struct IndexedCheckpoint {
  std::string directory;  // the step directory
  CheckpointInfo info;
  TrainConfig config;  // as saved, in the saving run's layout
};

// `path`: a step directory, or a checkpoint folder (its latest complete step).
IndexedCheckpoint openIndexedCheckpoint(const std::string& path);

}  // namespace strata::train

#include "checkpoint/indexed_checkpoint.h"

#include "strata/checkpoint/inspect.h"
#include "strata/config/config_file.h"
#include "strata/error.h"

namespace strata::train {

IndexedCheckpoint openIndexedCheckpoint(const std::string& path) {
  IndexedCheckpoint opened;
  opened.directory = completeStepDirectory(path);
  opened.info = readCheckpointInfo(opened.directory);
  if (opened.info.format < 2)
    throw CheckpointError("checkpoint '" + opened.directory +
                          "' is format 1, from before Strata indexed its tensors: it has no "
                          "tensor index to rebuild them from");
  applyConfigToml(opened.info.configToml, opened.directory + "/metadata.toml", opened.config);
  return opened;
}

}  // namespace strata::train

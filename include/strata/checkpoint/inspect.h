// `strata checkpoint inspect`: what a checkpoint holds, for people. Reads
// metadata.toml (checked against COMPLETE); with `verify`, rereads every
// shard file and checks its size and SHA-256. Writes the report to `out` and
// returns whether every check passed. Throws CheckpointError when the
// checkpoint is incomplete or its metadata corrupt; nothing blocks but the
// file reads.
#pragma once

#include <ostream>
#include <string>

namespace strata::train {

// `path`: a step directory, or a checkpoint folder (its latest complete step).
std::string completeStepDirectory(const std::string& path);

bool inspectCheckpoint(const std::string& path, bool verify, std::ostream& out);

}  // namespace strata::train

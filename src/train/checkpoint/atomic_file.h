// Durable, all-or-nothing file writes for checkpoints.
//
// writeFileAtomically writes `bytes` to PATH.tmp-PID, fsyncs it, renames it
// over PATH and fsyncs the parent directory, so after a crash PATH holds
// either its old content or all of the new one, never a prefix. Blocks on
// disk I/O; throws CheckpointError naming the path and errno text on failure.
#pragma once

#include <string>

namespace strata::train {

void writeFileAtomically(const std::string& path, const std::string& bytes);
// fsync of a directory, so renames inside it survive a crash.
void syncDirectory(const std::string& path);
// The whole file; throws CheckpointError naming the path when unreadable.
std::string readWholeFile(const std::string& path);

}  // namespace strata::train

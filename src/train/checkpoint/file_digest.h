// A checkpoint file's size and SHA-256, read in 1 MiB pieces, so verifying a
// shard of any size takes constant memory. Blocks on disk I/O; throws
// CheckpointError naming the path when the file cannot be opened or read.
#pragma once

#include <cstdint>
#include <string>

namespace strata::train {

struct FileDigest {
  int64_t bytes = 0;
  std::string sha256;  // lower-case hex
};

FileDigest digestFile(const std::string& path);

}  // namespace strata::train

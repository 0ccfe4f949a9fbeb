// A checkpoint file's size and SHA-256, read in 1 MiB pieces, so verifying a
// shard of any size takes constant memory. Blocks on disk I/O; throws
// CheckpointError naming the path when the file cannot be opened or read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace strata::train {

struct FileDigest {
  int64_t bytes = 0;
  std::string sha256;  // lower-case hex
};

// `eachPiece`, when given, also receives every piece as it is read (a copy).
FileDigest digestFile(const std::string& path,
                      const std::function<void(const char*, std::size_t)>& eachPiece = {});

}  // namespace strata::train

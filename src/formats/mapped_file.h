// A whole file mapped read-only into memory (mmap, MAP_SHARED), so several
// processes reading the same file share one copy in the page cache. An empty
// file maps to no bytes. Throws ConfigError naming the file when it cannot be
// opened or mapped; nothing blocks beyond the page faults of reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::formats {

class MappedFile {
 public:
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace strata::formats

// The safetensors format (Hugging Face's): an 8-byte little-endian header
// length N, N bytes of JSON, then the raw little-endian tensor bytes. The
// header maps each tensor's name to {"dtype", "shape", "data_offsets":
// [begin, end)} (offsets into the bytes after the header) and may hold a
// "__metadata__" object of strings.
//
// writeSafetensors writes atomically (atomic_file.h) and blocks on disk I/O.
// SafetensorsFile maps a file read-only (mmap) and checks its whole header
// at construction, so a reader touches only the pages of the tensors it
// views. Every problem throws SafetensorsError naming the file and what is
// wrong (a header past the end of the file, JSON that does not parse, an
// unknown dtype, offsets outside the data or disagreeing with the shape).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/error.h"

namespace strata::formats {

class SafetensorsError : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

struct SafetensorsEntry {
  std::string dtype;           // the format's name: "F32", "BF16", ...
  std::vector<int64_t> shape;  // [] for a scalar
  int64_t begin = 0, end = 0;  // byte offsets after the header
};

// `tensors` in this order, each written contiguous from the CPU; `metadata`
// goes into "__metadata__". Throws SafetensorsError for a dtype the format
// has no name for, CheckpointError for I/O failures.
void writeSafetensors(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata);

class MappedFile;

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The tensor's bytes as a CPU tensor over the read-only mapping, valid
  // while this object lives; copy from it, never write to it. Throws
  // SafetensorsError for a name the file does not hold.
  at::Tensor view(const std::string& name) const;

 private:
  std::string path_;
  std::unique_ptr<MappedFile> file_;
  int64_t dataStart_ = 0;  // 8 + header length
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace strata::formats

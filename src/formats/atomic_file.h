// Durable, all-or-nothing file writes for checkpoints.
//
// AtomicFileWriter writes PATH.tmp-PID piece by piece; commit() fsyncs it,
// renames it over PATH and fsyncs the parent directory, so after a crash PATH
// holds either its old content or all of the new one, never a prefix. A
// writer destroyed without commit() removes its temporary file and leaves
// PATH alone. Blocks on disk I/O; throws CheckpointError naming the path and
// errno text on failure.
#pragma once

#include <cstddef>
#include <string>

namespace strata::formats {

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, std::size_t size);
  void commit();

 private:
  std::string path_, temporary_;
  int fd_;
  bool renamed_ = false;
};

// An AtomicFileWriter for bytes already in memory.
void writeFileAtomically(const std::string& path, const std::string& bytes);
// fsync of a directory, so renames inside it survive a crash.
void syncDirectory(const std::string& path);
// The whole file; throws CheckpointError naming the path when unreadable.
std::string readWholeFile(const std::string& path);

}  // namespace strata::formats

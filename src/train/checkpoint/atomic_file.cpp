#include "train/checkpoint/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "strata/train/checkpoint/checkpoint.h"

namespace strata::train {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw CheckpointError("cannot " + what + " '" + path + "': " + std::strerror(errno));
}

// Closes the descriptor on every path out, including exceptions.
class FileDescriptor {
 public:
  FileDescriptor(const std::string& path, int flags, mode_t mode = 0)
      : fd_(::open(path.c_str(), flags | O_CLOEXEC, mode)) {
    if (fd_ < 0) fail("open", path);
  }
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void writeAll(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write", path);
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void syncDirectory(const std::string& path) {
  FileDescriptor dir(path, O_RDONLY | O_DIRECTORY);
  if (::fsync(dir.get()) != 0) fail("fsync directory", path);
}

void writeFileAtomically(const std::string& path, const std::string& bytes) {
  std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  {
    FileDescriptor file(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    writeAll(file.get(), bytes, temporary);
    if (::fsync(file.get()) != 0) fail("fsync", temporary);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("rename into place", path);
  std::string parent = std::filesystem::path(path).parent_path().string();
  syncDirectory(parent.empty() ? "." : parent);
}

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace strata::train

#include "formats/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "strata/error.h"

namespace strata::formats {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw CheckpointError("cannot " + what + " '" + path + "': " + std::strerror(errno));
}

// Close-on-exec, so a process the trainer spawns inherits no checkpoint file.
int openFile(const std::string& path, int flags, mode_t mode = 0) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) fail("open", path);
  return fd;
}

// Closes the descriptor on every path out, including exceptions.
class FileDescriptor {
 public:
  FileDescriptor(const std::string& path, int flags) : fd_(openFile(path, flags)) {}
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

void syncDirectory(const std::string& path) {
  FileDescriptor dir(path, O_RDONLY | O_DIRECTORY);
  if (::fsync(dir.get()) != 0) fail("fsync directory", path);
}

AtomicFileWriter::AtomicFileWriter(const std::string& path)
    : path_(path),
      temporary_(path + ".tmp-" + std::to_string(::getpid())),
      fd_(openFile(temporary_, O_WRONLY | O_CREAT | O_TRUNC, 0644)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!renamed_) ::unlink(temporary_.c_str());
}

void AtomicFileWriter::write(const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd_, bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write", temporary_);
    done += static_cast<std::size_t>(n);
  }
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0) fail("fsync", temporary_);
  ::close(fd_);  // fsync has already reported any write error
  fd_ = -1;
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) fail("rename into place", path_);
  renamed_ = true;
  std::string parent = std::filesystem::path(path_).parent_path().string();
  syncDirectory(parent.empty() ? "." : parent);
}

void writeFileAtomically(const std::string& path, const std::string& bytes) {
  AtomicFileWriter file(path);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace strata::formats

#include "runtime/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/error.h"

namespace strata {
namespace {

std::string describe(const std::string& what, const std::string& name, int error) {
  return "shared memory segment " + name + ": " + what + " failed: " + std::strerror(error);
}

// Maps and closes `fd` (the mapping keeps the segment alive).
void* mapOrThrow(int fd, const std::string& name, std::size_t bytes) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int error = errno;
  close(fd);
  if (data == MAP_FAILED) throw ConfigError(describe("mmap", name, error));
  return data;
}

}  // namespace

std::unique_ptr<SharedSegment> SharedSegment::create(const std::string& name, std::size_t bytes) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw ConfigError(describe("shm_open", name, errno));
  // posix_fallocate returns the error instead of setting errno.
  if (int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    close(fd);
    shm_unlink(name.c_str());
    throw ConfigError(describe("reserving " + std::to_string(bytes) + " bytes", name, error));
  }
  void* data = nullptr;
  try {
    data = mapOrThrow(fd, name, bytes);
  } catch (...) {
    shm_unlink(name.c_str());
    throw;
  }
  return std::unique_ptr<SharedSegment>(new SharedSegment(name, data, bytes));
}

std::unique_ptr<SharedSegment> SharedSegment::open(const std::string& name, std::size_t bytes) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw ConfigError(describe("shm_open", name, errno));
  void* data = mapOrThrow(fd, name, bytes);
  return std::unique_ptr<SharedSegment>(new SharedSegment(name, data, bytes));
}

SharedSegment::~SharedSegment() { munmap(data_, bytes_); }

void SharedSegment::unlink() { shm_unlink(name_.c_str()); }

}  // namespace strata

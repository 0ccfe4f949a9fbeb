// A POSIX shared-memory segment mapped into this process.
//
// create() makes a fresh segment (the name must not exist) and reserves its
// pages up front, so a full /dev/shm fails here with ConfigError rather than
// with SIGBUS at first touch; open() maps one another process created.
// Neither blocks. unlink() removes the name (the mapping stays valid), so a
// segment whose users have all mapped it leaks nothing if they crash.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace strata {

class SharedSegment {
 public:
  static std::unique_ptr<SharedSegment> create(const std::string& name, std::size_t bytes);
  static std::unique_ptr<SharedSegment> open(const std::string& name, std::size_t bytes);
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  void unlink();
  void* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  SharedSegment(std::string name, void* data, std::size_t bytes)
      : name_(std::move(name)), data_(data), bytes_(bytes) {}

  std::string name_;
  void* data_;
  std::size_t bytes_;
};

}  // namespace strata

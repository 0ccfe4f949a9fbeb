// The one error hierarchy of Strata: everything Strata throws derives from
// strata::Error, so a caller catches one type. Every message names the thing
// that went wrong: the flag, the factor, the operation and its group or peer.
//
// Standard library only, so the LibTorch-free layers (schedule, plan, util)
// share it.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

namespace strata {

// Base of every Strata error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad configuration, flag or environment, detected before any communication,
// so every rank raises the same error.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A bad command line: an unknown flag or command, a missing or malformed
// value, flags that do not fit together. A ConfigError, so callers that
// handle configuration errors handle flags too; its message names the
// command and ends by pointing at the command's --help.
class FlagError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// A blocking call ran past its deadline.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// A peer went away (exited, crashed, closed its connection).
class PeerError : public Error {
 public:
  using Error::Error;
};

// A peer sent something malformed or absurd.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

// A file Strata writes or reads (a checkpoint, a weights file, a tokenizer)
// cannot be written, is missing, or is damaged; the message names the file.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

// An operating-system call failed (fork, pipe, ...): names the call and
// errno's meaning, and keeps errno.
class SystemError : public Error {
 public:
  SystemError(const std::string& call, int error)
      : Error(call + ": " + std::strerror(error)), error_(error) {}
  int error() const { return error_; }

 private:
  int error_;
};

}  // namespace strata

// Command-line flags for every `strata` subcommand.
//
// A FlagSet binds `--name VALUE` (or `--name=VALUE`) options to variables whose
// initial values are the defaults shown by `--help`. Parsing never blocks;
// it throws FlagError, whose message names the flag and the command, for an
// unknown flag, a missing or malformed value, or a value out of range.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "strata/error.h"

namespace strata {

// A bad command line: a ConfigError, so callers that handle configuration
// errors handle flags too.
class FlagError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

struct ParsedArgs {
  bool helpRequested = false;
  std::vector<std::string> positional;  // arguments that are not flags
  std::vector<std::string> rest;        // everything after a bare `--`
};

class FlagSet {
 public:
  FlagSet(std::string command, std::string summary);

  void addInt(const std::string& name, long long* target, const std::string& help,
              long long min = std::numeric_limits<long long>::min());
  void addDouble(const std::string& name, double* target, const std::string& help);
  void addString(const std::string& name, std::string* target, const std::string& help);
  // A switch: `--name` sets true, `--name=false` / `--no-name` sets false.
  void addBool(const std::string& name, bool* target, const std::string& help);

  // Throws FlagError. `--help`/`-h` sets helpRequested and stops nothing else.
  ParsedArgs parse(const std::vector<std::string>& args) const;
  // Whether the last parse saw `--name` explicitly (config files use this so
  // that command-line values override file values).
  bool wasSet(const std::string& name) const;
  std::string help() const;
  const std::string& command() const { return command_; }

 private:
  struct Flag {
    std::string name, help, defaultText, valueName;
    bool isSwitch = false;
    std::function<void(const std::string&)> set;
  };
  const Flag* find(const std::string& name) const;
  [[noreturn]] void fail(const std::string& message) const;

  std::string command_, summary_;
  std::vector<Flag> flags_;
  mutable std::vector<std::string> seen_;
};

}  // namespace strata

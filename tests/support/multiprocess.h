// Runs a test body in N real processes on loopback.
//
// The test binary re-executes itself once per rank with a filter that selects
// the current test (never fork() after LibTorch threads exist). Each child
// sees RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (a free port) and
// STRATA_TIMEOUT, runs only the matching runInProcesses() body and exits.
// The parent gathers every rank's exit status and output, kills the others as
// soon as one fails, and kills everything after `timeout`. A rank that exits
// successfully without having entered the body (a --gtest_filter that
// matched nothing, a body index that went astray) counts as failed.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "strata/util/subprocess.h"

namespace strata::testing {

struct RankContext {
  int rank = 0;
  int worldSize = 1;
};

struct MultiProcessOptions {
  std::chrono::seconds timeout{180};
  double commTimeoutSeconds = 60;
  bool killOthersOnFailure = true;
  std::map<std::string, std::string> env;  // extra variables for every rank
  // Per-rank extra variables.
  std::function<std::map<std::string, std::string>(int rank)> rankEnv;
};

struct RankResult {
  ExitStatus exit;
  bool timedOut = false;  // still running at the deadline and killed
  bool ranBody = false;   // the rank entered runInProcesses' body
  std::string output;     // stdout and stderr together
};

// Runs body on every rank and returns the raw results; asserts nothing.
std::vector<RankResult> runInProcessesRaw(int worldSize,
                                          const std::function<void(const RankContext&)>& body,
                                          const MultiProcessOptions& options = {});

// Runs body on every rank; a failing, crashing or hanging rank fails the test
// with its output.
void runInProcesses(int worldSize, const std::function<void(const RankContext&)>& body,
                    const MultiProcessOptions& options = {});

// Whether this process is a rank that runInProcesses started. A rank runs its
// test from the top, so code before its runInProcesses call (between two
// calls, say) runs in the parent and again in every rank of the later call;
// work meant to happen once (writing, converting, mounting) checks this.
bool inRankProcess();

// 0, 1, ..., worldSize - 1: the members of a group of every rank.
std::vector<int> allRanks(int worldSize);

// A TCP port on 127.0.0.1 held bound (SO_REUSEADDR, never listening) for
// this object's lifetime: no other socket on the machine is given it, and the
// job's rendezvous store, which binds with SO_REUSEADDR too, can still listen
// on it. So concurrent tests never race for a port between choosing and
// using it.
class ReservedPort {
 public:
  ReservedPort();
  ~ReservedPort();
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;
  int number() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace strata::testing

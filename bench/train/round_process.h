// A benchmark's side in a child process of its own, run one round at a time
// on command. Two of them alternated measure two training loops with
// neither's allocator, heap or caches in the other's process, while the
// host's drift, shared by both, cancels.
//
// The parent and the child talk over one Unix socket pair: the parent sends
// a byte for each round, the child runs the round and answers with one line
// of numbers. round() blocks until that line arrives, at most `timeout`,
// and throws std::runtime_error naming the side when the child exits, sends
// something that is not numbers or runs past the timeout (the child is then
// killed). The destructor closes the socket, which ends serveRounds in the
// child, and reaps the child, killing it if it has not ended by the timeout.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace strata::bench {

class RoundProcess {
 public:
  // Starts `argv` (argv[0] a path) with "--channel <fd>" appended: the
  // child's end of the socket, which it passes to serveRounds.
  RoundProcess(std::string side, std::vector<std::string> argv, std::chrono::seconds timeout);
  ~RoundProcess();
  RoundProcess(const RoundProcess&) = delete;
  RoundProcess& operator=(const RoundProcess&) = delete;

  // Runs one round in the child and returns the numbers it answered.
  std::vector<double> round();

 private:
  [[noreturn]] void fail(const std::string& why);
  std::string readLine();

  std::string side_;
  std::chrono::seconds timeout_;
  int channel_ = -1;
  pid_t pid_ = -1;
};

// The child's part: for each round the parent asks for, runs `runRound` and
// answers with its numbers; returns when the parent closes the channel.
// Throws std::runtime_error when the channel fails.
void serveRounds(int channel, const std::function<std::vector<double>()>& runRound);

}  // namespace strata::bench

#include "job_end.h"

#include <iostream>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "store_json.h"
#include "strata/error.h"
#include "wait_progress.h"

namespace strata {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kJobEndPollInterval{100};
// Node 0 stays up this long at least after the verdict, so a launcher
// outside the round (polling every 200 ms for the next one) sees the job end.
constexpr std::chrono::milliseconds kLinger{500};
const char kVerdict[] = "verdict";
const char kVerdictRead[] = "verdict-read";
const char kJobEnded[] = "job-ended";

std::string endKey(int64_t nodeRank) { return "end/" + std::to_string(nodeRank); }

std::string nodeList(const std::vector<int64_t>& ranks) {
  std::string text;
  for (int64_t r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

// The decider(s): every node's end, or the names of those that never posted one.
json collectEnds(c10d::Store& round, const NodeClaim& self, const NodeMap& nodes, Deciders deciders,
                 std::chrono::milliseconds timeout) {
  WaitProgress progress(timeout);
  for (;;) {
    std::vector<int64_t> missing;
    for (int64_t rank : nodes.nodeRanks) {
      if (!round.check({endKey(rank)})) {
        missing.push_back(rank);
      } else if (takeJson(round, endKey(rank)).value("restarting", false)) {
        return json{{"restart", true}};
      }
    }
    if (missing.empty()) break;
    if (progress.expired()) {
      return json{{"restart", false},
                  {"exit", 1},
                  {"failed",
                   {"node(s) " + nodeList(missing) + " never reported their end within " +
                    describeDuration(timeout) + " (their launchers may have died)"}}};
    }
    progress.report(self.describe() + " has finished and waits for node(s) " + nodeList(missing) +
                    (deciders == Deciders::kNodeZero
                         ? " to finish before it closes the job's rendezvous store"
                         : " to finish"));
    std::this_thread::sleep_for(kJobEndPollInterval);
  }
  json verdict{{"restart", false}, {"exit", 0}, {"failed", json::array()}};
  for (int64_t rank : nodes.nodeRanks) {
    json end = takeJson(round, endKey(rank));
    int code = end.at("exit");
    if (code == 0) continue;
    if (verdict["exit"] == 0) verdict["exit"] = code;
    verdict["failed"].push_back(end.at("node").get<std::string>() + " ended with exit code " +
                                std::to_string(code) + ": " + end.at("cause").get<std::string>());
  }
  return verdict;
}

// Every launcher but node 0: the verdict, once node 0 has published it.
json awaitVerdict(c10d::Store& round, const NodeClaim& self, std::chrono::milliseconds timeout) {
  WaitProgress progress(timeout);
  while (!round.check({kVerdict})) {
    if (progress.expired())
      throw TimeoutError("node 0 never published how the job ended within " +
                         describeDuration(timeout) + " (" + self.describe() +
                         " finished and waited for it)");
    progress.report(self.describe() + " has finished; it waits for the other nodes to finish");
    std::this_thread::sleep_for(kJobEndPollInterval);
  }
  json verdict = takeJson(round, kVerdict);
  round.add(kVerdictRead, 1);
  return verdict;
}

// Node 0 keeps the store up until each launcher of the round has read the
// verdict, at most `timeout`.
void awaitVerdictRead(c10d::Store& round, const NodeMap& nodes, std::chrono::milliseconds timeout) {
  Clock::time_point start = Clock::now(), deadline = start + timeout;
  auto others = static_cast<int64_t>(nodes.nodeRanks.size()) - 1;
  while ((round.add(kVerdictRead, 0) < others || Clock::now() - start < kLinger) &&
         Clock::now() < deadline)
    std::this_thread::sleep_for(kJobEndPollInterval);
}

// Runs one exchange with the store, turning its loss into a PeerError that
// says what this launcher was doing.
template <typename Step>
auto onStore(const NodeClaim& self, const char* doing, Step&& step) {
  try {
    return step();
  } catch (const Error&) {
    throw;  // the etcd store's own errors say what was lost
  } catch (const c10::Error& e) {
    throw PeerError("lost the job's rendezvous store (node 0's launcher) while " + self.describe() +
                    " " + doing + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw PeerError("lost the job's rendezvous store (node 0's launcher) while " + self.describe() +
                    " " + doing + ": " + e.what());
  }
}

json endOf(const NodeClaim& self, const NodeEnd& end, bool restarting) {
  return {{"exit", end.exitCode},
          {"cause", end.cause},
          {"node", self.describe()},
          {"restarting", restarting}};
}

}  // namespace

std::optional<int> agreeOnJobEnd(c10d::Store& round, c10d::Store& control, const NodeClaim& self,
                                 const NodeMap& nodes, const NodeEnd& own, Deciders deciders,
                                 std::chrono::milliseconds timeout) {
  json verdict = onStore(self, "waited for the other nodes to finish", [&] {
    putJson(round, endKey(self.nodeRank), endOf(self, own, false));
    if (deciders == Deciders::kEveryLauncher) {
      json decided = collectEnds(round, self, nodes, deciders, timeout);
      if (!decided.at("restart").get<bool>()) markJobEnded(control, decided.at("exit"));
      return decided;
    }
    if (self.nodeRank != 0) return awaitVerdict(round, self, timeout);
    json decided = collectEnds(round, self, nodes, deciders, timeout);
    putJson(round, kVerdict, decided);
    // After a restart verdict this launcher serves the next round: no need
    // to wait for the readers.
    if (decided.at("restart").get<bool>()) return decided;
    markJobEnded(control, decided.at("exit"));
    awaitVerdictRead(round, nodes, timeout);
    return decided;
  });
  if (verdict.at("restart").get<bool>()) {
    std::cerr << "strata launch: another node failed after " << self.describe()
              << " had finished; it restarts with it" << std::endl;
    return std::nullopt;
  }
  if (own.exitCode != 0) return own.exitCode;
  for (const json& failure : verdict.at("failed"))
    std::cerr << "strata launch: the job failed: " << failure.get<std::string>() << std::endl;
  return verdict.at("exit").get<int>();
}

void announceRestart(c10d::Store& round, const NodeClaim& self, const NodeEnd& failure) {
  onStore(self, "announced its restart",
          [&] { putJson(round, endKey(self.nodeRank), endOf(self, failure, true)); });
}

std::string restartingNode(c10d::Store& round, const NodeMap& nodes, int64_t self) {
  for (int64_t rank : nodes.nodeRanks) {
    if (rank == self || !round.check({endKey(rank)})) continue;
    json end = takeJson(round, endKey(rank));
    if (end.value("restarting", false)) return end.value("node", "node " + std::to_string(rank));
  }
  return "";
}

void markJobEnded(c10d::Store& control, int code) {
  std::string text = std::to_string(code);
  control.compareSet(kJobEnded, {}, std::vector<uint8_t>(text.begin(), text.end()));
}

int jobEndedWith(c10d::Store& control) {
  if (!control.check({kJobEnded})) return -1;
  std::vector<uint8_t> text = control.get(kJobEnded);
  return std::stoi(std::string(text.begin(), text.end()));
}

}  // namespace strata

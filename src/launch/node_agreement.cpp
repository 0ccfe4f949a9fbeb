#include "node_agreement.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "store_json.h"
#include "strata/error.h"
#include "strata/runtime/timeouts.h"
#include "strata/util/log.h"
#include "wait_progress.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr std::chrono::milliseconds kAgreementPollInterval{100};
const char kClaimCount[] = "claims";
const char kDecision[] = "decision";
const char kAcknowledged[] = "acknowledged";
constexpr std::chrono::seconds kAcknowledgeWait{5};

std::string claimKey(int64_t number) { return "claim/" + std::to_string(number); }

json toJson(const NodeClaim& c) {
  return {{"node_rank", c.nodeRank},
          {"nnodes", c.nnodes},
          {"nproc_per_node", c.nprocPerNode},
          {"max_restarts", c.maxRestarts},
          {"min_nodes", c.minNodes},
          {"host", c.host},
          {"pid", c.pid},
          {"store", c.storeAddress}};
}

NodeClaim claimFrom(const json& j) {
  NodeClaim c;
  c.nodeRank = j.at("node_rank");
  c.nnodes = j.at("nnodes");
  c.nprocPerNode = j.at("nproc_per_node");
  c.maxRestarts = j.at("max_restarts");
  c.minNodes = j.at("min_nodes");
  c.host = j.at("host");
  c.pid = j.at("pid");
  c.storeAddress = j.value("store", "");
  return c;
}

// The first thing `claim` disagrees on with the job as `node0` (node 0's
// claim, or the first claim when every launcher decides) and the claims
// before it define it; empty when it fits.
std::string disagreement(const NodeClaim& node0, const std::map<int64_t, NodeClaim>& held,
                         const NodeClaim& claim) {
  auto differs = [&](const char* flag, int64_t mine, int64_t theirs) {
    return "the launchers disagree on " + std::string(flag) + ": " + node0.describe() + " has " +
           flag + " " + std::to_string(mine) + ", " + claim.describe() + " has " + flag + " " +
           std::to_string(theirs);
  };
  if (claim.nnodes != node0.nnodes) return differs("--nnodes", node0.nnodes, claim.nnodes);
  if (claim.minNodes != node0.minNodes)
    return differs("the --nnodes minimum", node0.minNodes, claim.minNodes);
  if (claim.maxRestarts != node0.maxRestarts)
    return differs("--max-restarts", node0.maxRestarts, claim.maxRestarts);
  auto holder = held.find(claim.nodeRank);
  if (holder != held.end()) {
    return "two launchers claim --node-rank " + std::to_string(claim.nodeRank) + ": " +
           holder->second.describe() + " and " + claim.host + " (pid " + std::to_string(claim.pid) +
           "); give each node its own rank";
  }
  return "";
}

std::string missingNodes(const std::map<int64_t, NodeClaim>& held, int64_t nnodes) {
  std::string missing;
  for (int64_t r = 0; r < nnodes; ++r) {
    if (!held.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  return missing;
}

json admitted(const std::map<int64_t, NodeClaim>& held, const json& accepted) {
  json sizes = json::array(), ranks = json::array(), holders = json::array();
  for (const auto& [rank, claim] : held) {
    sizes.push_back(claim.nprocPerNode);
    ranks.push_back(rank);
    holders.push_back(claim.describe());
  }
  return json{{"sizes", sizes},
              {"node_ranks", ranks},
              {"accepted", accepted},
              {"holders", holders},
              {"store", held.begin()->second.storeAddress}};
}

// The decider: reads claims in arrival order until every node rank is held
// (or, in an elastic job, enough are and joinWait has passed) or one
// disagrees; returns the decision. Under kEveryLauncher it returns the
// decision another launcher published first as soon as there is one.
json decide(c10d::Store& store, const NodeClaim& self, Deciders deciders,
            std::chrono::milliseconds joinWait, std::chrono::milliseconds timeout) {
  bool everyone = deciders == Deciders::kEveryLauncher;
  std::optional<NodeClaim> reference;  // whose flags the others must match
  if (!everyone) reference = self;
  std::map<int64_t, NodeClaim> held;
  json accepted = json::array();
  int64_t read = 0;
  WaitProgress progress(timeout);
  std::optional<Clock::time_point> enoughSince;  // elastic: when MIN nodes had joined
  for (;;) {
    if (everyone && store.check({kDecision})) return takeJson(store, kDecision);
    int64_t count = store.add(kClaimCount, 0);
    for (; read < count; ++read) {
      store.wait({claimKey(read + 1)}, timeout);
      NodeClaim claim = claimFrom(takeJson(store, claimKey(read + 1)));
      if (!reference) reference = claim;
      std::string problem = disagreement(*reference, held, claim);
      if (!problem.empty()) return json{{"error", problem}};
      held[claim.nodeRank] = claim;
      accepted.push_back(read + 1);
    }
    int64_t joined = static_cast<int64_t>(held.size());
    if (joined == self.nnodes) return admitted(held, accepted);
    if (joined >= self.minNodes && !enoughSince) enoughSince = Clock::now();
    if (enoughSince && Clock::now() - *enoughSince >= joinWait) return admitted(held, accepted);
    std::string missing = missingNodes(held, self.nnodes);
    if (progress.expired()) {
      std::string needed = self.minNodes < self.nnodes
                               ? " (the job needs at least " + std::to_string(self.minNodes) +
                                     " nodes and has " + std::to_string(joined) + ")"
                               : "";
      return json{{"error", "node(s) " + missing + " of " + std::to_string(self.nnodes) +
                                " never joined within " + describeDuration(timeout) + needed +
                                " (are their launchers running with this --rdzv-endpoint?)"},
                  {"timeout", true}};
    }
    progress.report("waiting for node(s) " + missing + " of " + std::to_string(self.nnodes) +
                    " to join");
    std::this_thread::sleep_for(kAgreementPollInterval);
  }
}

json awaitDecision(c10d::Store& store, const NodeClaim& self, std::chrono::milliseconds timeout) {
  WaitProgress progress(timeout);
  while (!store.check({kDecision})) {
    if (progress.expired()) {
      throw TimeoutError("node 0 never admitted " + self.describe() + " within " +
                         describeDuration(timeout) + " (" +
                         std::to_string(store.add(kClaimCount, 0)) + " of " +
                         std::to_string(self.nnodes) + " launchers have joined)");
    }
    progress.report("waiting for the other nodes to join (" +
                    std::to_string(store.add(kClaimCount, 0)) + " of " +
                    std::to_string(self.nnodes) + " launchers so far)");
    std::this_thread::sleep_for(kAgreementPollInterval);
  }
  return takeJson(store, kDecision);
}

// Node 0 serves the store: after a refusal it stays up until every launcher
// that claimed a place has read why, at most kAcknowledgeWait.
void awaitAcknowledgements(c10d::Store& store) {
  Clock::time_point deadline = Clock::now() + kAcknowledgeWait;
  while (store.add(kAcknowledged, 0) < store.add(kClaimCount, 0) - 1 && Clock::now() < deadline)
    std::this_thread::sleep_for(kAgreementPollInterval);
}

std::optional<NodeMap> mapFrom(const json& decision, const NodeClaim& self, int64_t number) {
  if (decision.contains("error")) {
    std::string error = decision.at("error");
    if (decision.contains("timeout")) throw TimeoutError(error);
    throw ConfigError(error);
  }
  const json& accepted = decision.at("accepted");
  if (std::find(accepted.begin(), accepted.end(), number) == accepted.end()) {
    if (self.minNodes < self.nnodes) return std::nullopt;
    const json& holders = decision.at("holders");
    std::string held = self.nodeRank < static_cast<int64_t>(holders.size())
                           ? "--node-rank " + std::to_string(self.nodeRank) + " is held by " +
                                 holders.at(self.nodeRank).get<std::string>()
                           : "--node-rank " + std::to_string(self.nodeRank) + " is not one of them";
    throw ConfigError("the job already has all its " + std::to_string(holders.size()) +
                      " nodes and " + held + ", so this launcher (" + self.host + ", pid " +
                      std::to_string(self.pid) + ") was not admitted");
  }
  NodeMap map;
  for (const json& size : decision.at("sizes")) map.sizes.push_back(size.get<int>());
  for (const json& rank : decision.at("node_ranks")) map.nodeRanks.push_back(rank.get<int64_t>());
  map.storeAddress = decision.value("store", "");
  return map;
}

// kEveryLauncher: each launcher decides, and the first decision written is
// the round's.
json decideWithTheOthers(c10d::Store& store, const NodeClaim& self,
                         std::chrono::milliseconds joinWait, std::chrono::milliseconds timeout) {
  std::string mine = decide(store, self, Deciders::kEveryLauncher, joinWait, timeout).dump();
  std::vector<uint8_t> first =
      store.compareSet(kDecision, {}, std::vector<uint8_t>(mine.begin(), mine.end()));
  return json::parse(first.begin(), first.end());
}

}  // namespace

std::string NodeClaim::describe() const {
  return "node " + std::to_string(nodeRank) + " (" + host + ", pid " + std::to_string(pid) + ")";
}

int NodeMap::worldSize() const { return firstRankOf(static_cast<int>(sizes.size())); }

int NodeMap::firstRankOf(int node) const {
  int first = 0;
  for (int i = 0; i < node; ++i) first += sizes[i];
  return first;
}

int NodeMap::positionOf(int64_t nodeRank) const {
  auto at = std::find(nodeRanks.begin(), nodeRanks.end(), nodeRank);
  if (at == nodeRanks.end())
    throw Error("node rank " + std::to_string(nodeRank) + " is not among the job's nodes");
  return static_cast<int>(at - nodeRanks.begin());
}

std::string NodeMap::text() const {
  std::string out;
  for (int size : sizes) out += (out.empty() ? "" : ",") + std::to_string(size);
  return out;
}

std::optional<NodeMap> agreeOnNodes(const c10::intrusive_ptr<c10d::Store>& scope,
                                    const NodeClaim& self, Deciders deciders,
                                    std::chrono::milliseconds joinWait,
                                    std::chrono::milliseconds timeout) {
  if (self.nnodes == 1)
    return NodeMap{{static_cast<int>(self.nprocPerNode)}, {0}, self.storeAddress};
  c10d::Store& store = *scope;
  json decision;
  int64_t number = 0;
  try {
    number = store.add(kClaimCount, 1);
    putJson(store, claimKey(number), toJson(self));
    if (deciders == Deciders::kEveryLauncher) {
      decision = decideWithTheOthers(store, self, joinWait, timeout);
    } else if (self.nodeRank == 0) {
      decision = decide(store, self, deciders, joinWait, timeout);
      putJson(store, kDecision, decision);
      if (decision.contains("error")) awaitAcknowledgements(store);
    } else {
      decision = awaitDecision(store, self, timeout);
      store.add(kAcknowledged, 1);
    }
  } catch (const c10::Error& e) {
    throw Error(
        "lost the rendezvous store while the launchers agreed on the job's nodes (did node "
        "0's launcher exit?): " +
        std::string(e.what_without_backtrace()));
  }
  return mapFrom(decision, self, number);
}

}  // namespace strata

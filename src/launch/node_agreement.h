// The launchers of a multi-node job agree on its nodes before any worker
// starts, once per round: the first start, and each restart after a failure.
//
// Every launcher posts a claim (its --node-rank, --nnodes, --nproc-per-node,
// --max-restarts, host and pid) to the rendezvous store. Node 0's launcher
// (Deciders::kNodeZero: it serves the store) or, when the store outlives
// every launcher (etcd), each launcher alike (Deciders::kEveryLauncher: the
// first decision written wins, and the first claim stands where node 0's
// does below) reads the claims as they arrive and decides once: either every node rank in
// [0, nnodes) is claimed by exactly one launcher and the launchers agree on
// what they must share, and it publishes each node's worker count, so global
// ranks are given in node order (node 0's workers first) and nodes may differ
// in size; or it publishes the first disagreement, naming both launchers,
// and every launcher exits with it before starting a worker. A claim that
// arrives after the decision (a node rank already held) is refused alone.
//
// Elastic jobs (--nnodes MIN:MAX) close a round with whichever nodes have
// claimed once MAX have, or once at least MIN have and `joinWait` has passed
// since the MIN-th arrived; nodes are then numbered in the order of their
// node ranks, whatever gaps a missing node leaves. A claim that arrives after
// an elastic round closed is not refused: that launcher waits for the next.
//
// Blocks at most `timeout` (node 0 waiting for claims, the others for the
// decision), logging one line every few seconds that names who is missing.
// Throws ConfigError for a disagreement and TimeoutError when nodes or the
// decision never come.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace c10d {
class Store;
}  // namespace c10d

namespace strata {

struct NodeClaim {
  int64_t nodeRank = 0;
  int64_t nnodes = 1;
  int64_t nprocPerNode = 1;
  int64_t maxRestarts = 0;
  int64_t minNodes = 1;  // equal to nnodes unless the job is elastic
  std::string host;      // gethostname() of the launcher
  int64_t pid = 0;
  // "HOST:PORT" of the workers' store this launcher serves for the round;
  // empty when it serves none (the static backend's nodes other than 0).
  std::string storeAddress;

  // "node 1 (host b, pid 42)"
  std::string describe() const;
};

// The job's nodes as agreed: the i-th node, launched with --node-rank
// nodeRanks[i], runs sizes[i] workers.
struct NodeMap {
  std::vector<int> sizes;
  std::vector<int64_t> nodeRanks;
  // The round's workers' store: the storeAddress of its first node.
  std::string storeAddress;

  int worldSize() const;
  int firstRankOf(int node) const;
  // The position of the launcher with --node-rank `nodeRank` (its GROUP_RANK).
  int positionOf(int64_t nodeRank) const;
  // "3,2": STRATA_NODE_SIZES, as the workers read it.
  std::string text() const;
};

enum class Deciders { kNodeZero, kEveryLauncher };

// `scope`: the round's launcher keys (rendezvous.h's jobScope). Everyone
// calls it once per round. nullopt: an elastic round closed without this
// launcher.
std::optional<NodeMap> agreeOnNodes(const c10::intrusive_ptr<c10d::Store>& scope,
                                    const NodeClaim& self, Deciders deciders,
                                    std::chrono::milliseconds joinWait,
                                    std::chrono::milliseconds timeout);

}  // namespace strata

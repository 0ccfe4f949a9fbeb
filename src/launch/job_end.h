// The exit barrier of a multi-node job: the launchers agree on how the job
// ended before any of them exits.
//
// Node 0's launcher serves the rendezvous store, so it must not exit while
// another launcher still needs it: a fast job's node 0 would otherwise take
// the store down before a slower node has read the agreement, started its
// workers or seen them finish. So every launcher of the round posts its
// node's end (its exit code and, after a failure, the cause) to the round's
// keys; node 0 waits until every node of the round has posted, publishes the
// job's verdict (0 when every node ended well, else the failing nodes named)
// and stays up until each launcher has read it. Every launcher then exits
// with the verdict's code, so each one's exit status reflects the whole job.
//
// Under Deciders::kEveryLauncher (etcd: the store outlives every launcher)
// no launcher is special: each waits for every node's end and computes the
// same verdict itself, and none lingers for readers.
//
// A node whose workers failed while restarts remain does not wait: it posts
// that it restarts (announceRestart) and goes on to the next round, and the
// verdict then tells the launchers waiting here to restart with it, so a
// node that failed after the others had finished is not left alone in a
// round nobody opens.
//
// Blocks at most `timeout`: node 0 waiting for the others' ends (the nodes
// that never post are named and counted as failed), the others waiting for
// the verdict. Throws PeerError when the store is lost midway (node 0's
// launcher gone), naming its address and what the launcher was doing.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <optional>
#include <string>

#include "node_agreement.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace strata {

struct NodeEnd {
  int exitCode = 0;
  std::string cause;  // empty when exitCode is 0: "rank 3 (local rank 1) failed with exit code 2"
};

// `round`: the round's launcher keys (the scope agreeOnNodes used); `nodes`:
// the round's nodes as agreed; `control`: the job's launcher keys, where node
// 0 marks the job ended for launchers waiting outside the round (an elastic
// job's late nodes). Returns the exit code this launcher should exit with,
// or nullopt when a node restarts and this launcher must join the next round.
std::optional<int> agreeOnJobEnd(c10d::Store& round, c10d::Store& control, const NodeClaim& self,
                                 const NodeMap& nodes, const NodeEnd& own, Deciders deciders,
                                 std::chrono::milliseconds timeout);

// Posts that this node failed and restarts its workers in the next round.
// Does not wait; throws PeerError when the store is lost.
void announceRestart(c10d::Store& round, const NodeClaim& self, const NodeEnd& failure);

// "node 2 (host c, pid 42)" when a node of the round other than `self`
// announced a restart, else "". One check per node on the store; throws what
// the store throws.
std::string restartingNode(c10d::Store& round, const NodeMap& nodes, int64_t self);

// Marks the job ended with `code` on `control`, unless a launcher already
// did (the first mark stands). Throws what the store throws.
void markJobEnded(c10d::Store& control, int code);

// The job's exit code once a launcher has marked it ended on `control`; -1
// while it runs.
int jobEndedWith(c10d::Store& control);

}  // namespace strata

// Rendezvous: every process of a job finds the others through c10d's TCPStore.
//
// Rank 0 serves the store at MASTER_ADDR:MASTER_PORT unless `strata launch`
// already does (STRATA_LAUNCHER_STORE=1); everyone else connects as a client.
//
// The job token (STRATA_JOB_TOKEN / --job-token). Every key of the job lives
// under a prefix derived from the token by a one-way hash, and the store holds
// a public fingerprint (a different hash of the token). A process with another
// token, or none, sees a different fingerprint and is refused with a
// ConfigError before it touches anything; since it cannot compute the prefix
// it can neither read nor write the job's keys, so it cannot join the job's
// groups, read peers' addresses or disturb their bookkeeping. What the token
// does NOT do: the transport is not encrypted or authenticated, so anyone who
// can watch the network sees the prefix and the tensors, and anyone who can
// reach the port can still fill the store or connect to it. It guards against
// accidents (two jobs on one port, a stale worker of an earlier job) and
// casual interference, not against an attacker on the network.
//
// Blocks: connecting to the store, at most timeouts.rendezvous; throws
// TimeoutError when the store cannot be reached, ConfigError when the port is
// taken (server side) or the token does not match.
#pragma once

#include <string>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "strata/runtime/process_env.h"
#include "strata/runtime/timeouts.h"

namespace strata {

// The store that hosts a job's rendezvous, as the launcher or rank 0 serves it.
// Port 0 picks a free port (see getPort()).
c10::intrusive_ptr<c10d::TCPStore> serveStore(const std::string& host, int port,
                                              std::chrono::milliseconds timeout);

// Publishes the token fingerprint on a freshly served store.
void publishTokenFingerprint(c10d::Store& store, const std::string& token);

// Connects to the store at host:port as a client and checks `token` against
// the job's fingerprint, as every worker does: the launcher of a node other
// than 0 calls it before starting workers, so a node with another token, or
// none, is refused once, at once, and by name. Blocks at most `timeout`
// (twice: to connect, then for the fingerprint); throws TimeoutError or
// ConfigError.
void checkJobToken(const std::string& host, int port, const std::string& token,
                   std::chrono::milliseconds timeout);

// Connects (or, on rank 0 without a launcher, serves), checks the token and
// returns a store scoped to this job and restart attempt.
c10::intrusive_ptr<c10d::Store> rendezvous(const ProcessEnv& env, const Timeouts& timeouts);

}  // namespace strata

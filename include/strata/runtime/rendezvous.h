// Rendezvous: every process of a job finds the others through c10d's TCPStore.
//
// Node 0's launcher (or rank 0, without a launcher) serves the store at
// MASTER_ADDR:MASTER_PORT; everyone else connects as a client, waiting for
// the address to resolve and accept connections (pods start in any order).
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
#pragma once

#include <string>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "strata/runtime/process_env.h"
#include "strata/runtime/timeouts.h"

namespace strata {

// Serves the store that hosts a job's rendezvous and publishes the token's
// fingerprint on it. Port 0 picks a free port (see getPort()). Throws
// ConfigError when the port is taken, Error when the address cannot be served.
c10::intrusive_ptr<c10d::TCPStore> serveStore(const std::string& host, int port,
                                              const std::string& token,
                                              std::chrono::milliseconds timeout);

// Connects to the store at host:port as a client. Blocks at most `timeout`
// while the name does not resolve or nothing listens yet, logging one line
// every few seconds that says what it waits for; throws TimeoutError naming
// the address and the last obstacle.
c10::intrusive_ptr<c10d::TCPStore> connectStore(const std::string& host, int port,
                                                std::chrono::milliseconds timeout);

// The job's keys under `scope` ("attempt-0", "launchers"), once the store's
// fingerprint shows it serves the job of `token`. Blocks at most `timeout`
// for the fingerprint; throws TimeoutError when it never appears and
// ConfigError when the token does not match.
c10::intrusive_ptr<c10d::Store> jobScope(const c10::intrusive_ptr<c10d::Store>& store,
                                         const std::string& token, const std::string& scope,
                                         std::chrono::milliseconds timeout);

// On a store no process serves (the launchers' etcd): publishes the token's
// fingerprint unless one is there, so the first launcher's token is the
// job's and jobScope refuses a launcher whose token differs. Blocks and
// throws as the store's compareSet does.
void publishFingerprintOnce(c10d::Store& store, const std::string& token);

// Connects (or, on rank 0 without a launcher, serves), checks the token and
// returns a store scoped to this job and restart attempt. Blocks and throws
// as connectStore and jobScope do.
c10::intrusive_ptr<c10d::Store> rendezvous(const ProcessEnv& env, const Timeouts& timeouts);

}  // namespace strata

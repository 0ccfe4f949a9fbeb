// Waiting for a rendezvous endpoint that does not exist yet.
//
// On a cluster the pods of one job start in any order and the DNS name of
// the master's pod appears only once that pod runs, so a worker that starts
// first sees "name does not resolve", then "connection refused", before the
// master listens. waitUntilReachable retries both until `timeout`, logging one
// line every kProgressInterval that says what it still waits for.
//
// Blocks at most `timeout` (plus one connection attempt of at most a second);
// throws TimeoutError naming the endpoint and the last obstacle.
#pragma once

#include <chrono>
#include <string>

namespace strata {

constexpr std::chrono::seconds kProgressInterval{5};

// `what` names the endpoint in the messages ("the rendezvous store").
void waitUntilReachable(const std::string& host, int port, std::chrono::milliseconds timeout,
                        const std::string& what);

}  // namespace strata

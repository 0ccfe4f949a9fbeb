// Where the trainer benchmarks find their Python peer script, and a free
// loopback port for a world of one. Nothing here blocks; freeLoopbackPort
// throws std::runtime_error when no socket can be bound.
#pragma once

#include <string>

namespace strata::bench {

// The repository root this benchmark was built from.
std::string trainBenchSourceDir();
// A TCP port on 127.0.0.1 that was free a moment ago.
int trainBenchFreePort();

}  // namespace strata::bench

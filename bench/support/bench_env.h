// Where the benchmark finds its Python peer, and a free loopback port for it.
#pragma once

#include <string>

namespace strata::bench {

// The repository root this benchmark was built from.
std::string sourceDir();
// A TCP port on 127.0.0.1 that was free a moment ago.
int freeLoopbackPort();

}  // namespace strata::bench

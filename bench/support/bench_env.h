// Where the benchmark finds its Python peer, a free loopback port for it, and
// a one-process job.
#pragma once

#include <memory>
#include <string>

#include "strata/runtime/world.h"

namespace strata::bench {

// The repository root this benchmark was built from.
std::string sourceDir();
// The python that runs the PyTorch peers: $STRATA_PYTHON, else the one whose
// torch the build used (the project's .venv by default).
std::string peerPython();
// A TCP port on 127.0.0.1 that was free a moment ago.
int freeLoopbackPort();
// A job of one process (this one), its store on a free loopback port.
std::shared_ptr<World> singleProcessWorld();

}  // namespace strata::bench

// Every rank's text, on every rank: how a save collects the tensor index
// each rank computed for its own shard. Collective over `world` (two
// all-gathers, bounded by its timeouts: TimeoutError, PeerError).
#pragma once

#include <string>
#include <vector>

namespace strata {
class Communicator;
}

namespace strata::train {

std::vector<std::string> allGatherText(Communicator& world, const std::string& mine);

}  // namespace strata::train

// One verdict for a step every rank attempts (writing its shard, probing the
// checkpoint folder): the first failing rank's reason, known to every rank.
//
// A rank that fails alone and throws would leave the others blocked in the
// save's next collective until the timeout; instead every rank reports, and
// all throw (or go on) together with the same message.
#pragma once

#include <functional>
#include <string>

namespace strata {
class Communicator;
}

namespace strata::train {

// Runs `work`; returns what it threw (std::exception's what()), or "" when it
// returned.
std::string attempt(const std::function<void()>& work);

// Collective over `world` (an all-gather, then broadcasts from the first
// failing rank; each bounded by the communicator's timeout: TimeoutError,
// PeerError). `mine` is this rank's problem or "". Returns "" when no rank
// had one, else "rank R: <its problem>" (with how many others failed), the
// same text on every rank.
std::string firstProblem(Communicator& world, const std::string& mine);

}  // namespace strata::train

// Probes of this machine's constants, run inside the calibration's rank
// processes (calibration_tasks.h). Each blocks for the time it measures and
// returns seconds; the communicating ones are collectives over `group`
// (every member calls them) and throw the runtime's TimeoutError / PeerError
// when a peer fails.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::bench {

// The median time of `runs` back-to-back calls of `work`, after one untimed
// call. Run by one process alone (the profile task) and by both ranks at
// once (the machine task), it gives the slowdown of sharing the node.
double medianSeconds(const std::function<void()>& work, int runs);

// One AdamW step with global-norm clipping over `parameters` (gradients
// filled with noise first): what the trainer's optimizer step streams.
double optimizerStepSeconds(const std::vector<at::Tensor>& parameters);

// An all-reduce of `bytes` of float32 over `group`.
double allReduceSeconds(Communicator& group, int64_t bytes);

// One-way time of `bytes` between ranks 0 and 1 of `group`: half a ping-pong.
double pointToPointSeconds(Communicator& group, int64_t bytes);

}  // namespace strata::bench

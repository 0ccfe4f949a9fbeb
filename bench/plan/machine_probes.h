// Probes of this machine's constants, run inside the calibration's rank
// processes (calibration_tasks.h). Each blocks for the time it measures and
// returns the fastest of several runs in seconds (this machine is shared: the
// fastest run is the one least disturbed by other jobs); the communicating ones are collectives
// over `group` (every member calls them) and throw the runtime's TimeoutError / PeerError when a
// peer fails.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::bench {

// How much slower a block-sized matmul chain (the GPT's MLP at micro-batch
// 2 x seq 128: x [256, 256] through W1 [256, 1024] and W2 [1024, 256], 20
// times) runs on rank 0 when ranks 0 and 1 of `group` run it at once than
// when rank 0 runs it alone (rank 1 idle in a barrier): the ratio of the
// fastest runs of each over interleaved rounds, so that a drift in the
// machine's other load hits both sides alike. Meaningful on rank 0.
double concurrentSlowdown(Communicator& group);

// One AdamW step with global-norm clipping over `parameters` (gradients
// filled with noise first): what the trainer's optimizer step streams.
double optimizerStepSeconds(const std::vector<at::Tensor>& parameters);

// An all-reduce of `bytes` of float32 over `group`.
double allReduceSeconds(Communicator& group, int64_t bytes);

// One-way time of `bytes` between ranks 0 and 1 of `group`: half a ping-pong.
double pointToPointSeconds(Communicator& group, int64_t bytes);

}  // namespace strata::bench

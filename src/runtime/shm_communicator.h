// Collectives over shared memory for a group whose members share one host.
//
// Gloo moves every byte of a loopback all-reduce through TCP sockets: kernel
// copies, wake-ups and a progress thread, all on the cores the training
// itself needs. Members of one host can instead meet in one shared segment:
// each copies its data in, reduces its 1/n share of every chunk in place,
// and copies the result out — three passes over memory, two barriers.
//
// attachSharedMemory() wraps a communicator whose members all run on this
// host (same kernel boot, same /dev/shm, same pid namespace): all-reduce,
// all-gather and reduce-scatter of CPU tensors then go through the segment,
// in submission order on a worker thread; everything else (broadcast,
// point-to-point, barrier, CUDA tensors) still goes to the wrapped
// communicator. It is collective over `inner`, blocking like its broadcast
// and all-reduce, and returns `inner` unchanged when the members are on
// different hosts, when STRATA_SHM=0, or when any member cannot create or map
// the segment (then with one warning line on stderr from group rank 0).
//
// The collectives' waits are bounded by inner's timeout (TimeoutError naming
// the group ranks that did not arrive); a member that exits surfaces as
// PeerError within a few tens of milliseconds.
#pragma once

#include <memory>

#include "strata/runtime/communicator.h"

namespace strata {

std::shared_ptr<Communicator> attachSharedMemory(std::shared_ptr<Communicator> inner);

}  // namespace strata

// Collectives and point-to-point messages over shared memory for a group
// whose members share one host.
//
// Gloo moves every byte of a loopback all-reduce through TCP sockets: kernel
// copies, wake-ups and a progress thread, all on the cores the training
// itself needs. Members of one host can instead meet in one shared segment.
// A staged collective copies each member's data into the segment, reduces
// each member's 1/n share there and copies the result out, meeting at
// barriers on a worker thread, in submission order. An all-reduce of a
// tensor in a collective buffer (allocateCollectiveBuffer) moves no copies:
// members arrive without waiting and the tensor is reduced in place, piece by
// piece, by whoever is free (shm_claimed_reduce.h).
//
// attachSharedMemory() wraps a communicator whose members all run on this
// host (same kernel boot, same /dev/shm, same pid and network namespaces): all-reduce,
// all-gather and reduce-scatter of CPU tensors then go through the segment,
// and so do sends and receives of CPU tensors (shm_p2p.h: small ones staged
// in the segment, large ones copied once from the sender's memory); the rest
// (broadcast, barrier, CUDA tensors, large messages where the host refuses
// cross-process reads) still goes to the wrapped communicator. `processesOnHost` (the job's
// processes on this host) decides whether worker threads have a core to spare for in-place
// reductions during backward (shm_helper_policy.h). It is collective over `inner`, blocking like
// its broadcast and all-reduce, and returns `inner` unchanged when the members are on different
// hosts, when STRATA_SHM=0, or when any member cannot create or map the segment (then with one
// warning from group rank 0 through strata/util/log.h). ConfigError for a bad STRATA_SHM_HELPER.
//
// The collectives' waits are bounded by inner's timeout (TimeoutError naming
// the group ranks that did not arrive); a member that exits surfaces as
// PeerError within a few tens of milliseconds. Members that call different
// collectives get a ProtocolError naming what each passed.
#pragma once

#include <memory>

#include "strata/runtime/communicator.h"

namespace strata {

std::shared_ptr<Communicator> attachSharedMemory(std::shared_ptr<Communicator> inner,
                                                 int processesOnHost);

}  // namespace strata

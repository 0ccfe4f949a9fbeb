// One shared-memory segment mapped by every member of a group.
//
// Group rank 0 creates the segment under a fresh name and broadcasts the
// name; every other member maps it; then all report, and if any member could
// not map it, every member drops it together. The name is unlinked once all
// have mapped it, so nothing is left in /dev/shm when the processes exit,
// however they exit.
//
// Blocking: collective over `group` (a broadcast and an all-reduce, each
// bounded by the group's timeout: TimeoutError / PeerError).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/shm/shm_segment.h"
#include "strata/runtime/communicator.h"

namespace strata {

struct GroupSegment {
  std::unique_ptr<SharedSegment> segment;  // null on every member when any failed
  std::string problem;                     // why this member failed, if it did
};

// `purpose` goes into the segment's name ("/strata-<pid>-<random><purpose>").
GroupSegment mapSegmentTogether(Communicator& group, std::size_t bytes, const std::string& purpose);

}  // namespace strata

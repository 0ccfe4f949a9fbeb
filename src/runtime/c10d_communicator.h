// Communicator over a c10d backend (ProcessGroupGloo, ProcessGroupNCCL).
//
// create() blocks until every member of the group has joined through the
// store (each backend connects a full mesh), at most options.timeout, and
// throws TimeoutError naming the group and its missing members' ranks.
#pragma once

#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata {

struct GroupSpec {
  std::string name;              // unique in the job; also the store prefix
  std::vector<int> globalRanks;  // members, indexed by group rank
  int rank = 0;                  // this process's rank in the group
  CommOptions options;
  std::string backend = "gloo";  // "gloo" or "nccl"
  std::string localAddress;      // the address peers reach this process at (Gloo)
};

std::unique_ptr<Communicator> createC10dCommunicator(const GroupSpec& spec,
                                                     const c10::intrusive_ptr<c10d::Store>& store);

// Whether this build of Strata can create NCCL communicators.
bool ncclCompiledIn();

}  // namespace strata

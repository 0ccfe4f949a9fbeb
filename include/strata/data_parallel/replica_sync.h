// Making the replicas of a model start identical.
//
// Every function here is a collective over `comm`: all members call it with
// their own tensors, in the same order. checkSameStructure throws ConfigError
// on every rank alike when members disagree on the number, shapes or dtypes
// of the tensors (so no mismatched collective ever runs). checkTensorsEqual
// throws ConfigError, on every rank alike, naming the first tensor whose
// values differ between members. Each blocks at most the communicator's
// timeout per collective (TimeoutError / PeerError).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::data_parallel {

struct NamedTensor {
  std::string name;
  at::Tensor tensor;
};

void checkSameStructure(const std::vector<NamedTensor>& tensors, Communicator& comm);
// Overwrites every member's tensors with those of group rank `root`.
void broadcastTensors(const std::vector<NamedTensor>& tensors, Communicator& comm, int root = 0);
void checkTensorsEqual(const std::vector<NamedTensor>& tensors, Communicator& comm);

}  // namespace strata::data_parallel

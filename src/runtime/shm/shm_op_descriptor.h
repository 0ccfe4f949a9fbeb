// What each member of a shared-memory group says it is doing, so members that
// disagree (a different op, size, dtype or buffer) fail with ProtocolError
// instead of reading garbage or hanging on a barrier.
//
// Each member writes its descriptor before the first barrier of an op and
// checks all of them right after it. Descriptors come in two sets, used
// alternately like the staging slots: a set is rewritten only after the next
// barrier, which every member reaches after its check.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "strata/runtime/communicator.h"

namespace strata {

enum class ShmOpKind : uint8_t {
  kAllReduce = 1,
  kAllGather,
  kReduceScatter,
  kAllReduceInPlace,
  kReduceScatterInPlace,
};

struct ShmOpDescriptor {
  ShmOpKind kind;
  uint8_t dtype;     // at::ScalarType
  uint8_t reduceOp;  // ReduceOp; ignored for all-gather
  uint8_t unused = 0;
  uint32_t buffer;  // collective buffer id for in-place ops, else 0
  uint64_t offset;  // byte offset in the member's buffer region
  uint64_t numel;   // elements of the member's tensor (input for all-gather)
};

ShmOpDescriptor describeOp(ShmOpKind kind, const at::Tensor& tensor, ReduceOp op,
                           uint32_t buffer = 0, uint64_t offset = 0);

// Throws ProtocolError when any of `members` descriptors differs from group
// rank 0's; the message is the same on every member.
void checkMembersAgree(const ShmOpDescriptor* descriptors, int members, const std::string& what);

}  // namespace strata

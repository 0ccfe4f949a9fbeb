#include "runtime/shm/shm_op_descriptor.h"

#include "strata/error.h"

namespace strata {
namespace {

const char* kindName(ShmOpKind kind) {
  switch (kind) {
    case ShmOpKind::kAllReduce:
      return "all_reduce";
    case ShmOpKind::kAllGather:
      return "all_gather";
    case ShmOpKind::kReduceScatter:
      return "reduce_scatter";
    case ShmOpKind::kAllReduceInPlace:
      return "all_reduce in a collective buffer";
    case ShmOpKind::kReduceScatterInPlace:
      return "reduce_scatter from a collective buffer";
  }
  return "an unknown op";
}

const char* opName(uint8_t op) {
  switch (static_cast<ReduceOp>(op)) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "unknown";
}

bool same(const ShmOpDescriptor& a, const ShmOpDescriptor& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.reduceOp == b.reduceOp &&
         a.buffer == b.buffer && a.offset == b.offset && a.numel == b.numel;
}

std::string describe(const ShmOpDescriptor& d) {
  std::string text = std::string(kindName(d.kind)) + " of " + std::to_string(d.numel) + " " +
                     c10::toString(static_cast<at::ScalarType>(d.dtype)) + " elements";
  if (d.kind != ShmOpKind::kAllGather) text += std::string(" (") + opName(d.reduceOp) + ")";
  if (d.buffer != 0) {
    text += ", buffer " + std::to_string(d.buffer) + " at byte " + std::to_string(d.offset);
  }
  return text;
}

}  // namespace

ShmOpDescriptor describeOp(ShmOpKind kind, const at::Tensor& tensor, ReduceOp op, uint32_t buffer,
                           uint64_t offset) {
  ShmOpDescriptor d{};
  d.kind = kind;
  d.dtype = static_cast<uint8_t>(tensor.scalar_type());
  d.reduceOp = static_cast<uint8_t>(op);
  d.buffer = buffer;
  d.offset = offset;
  d.numel = static_cast<uint64_t>(tensor.numel());
  return d;
}

void checkMembersAgree(const ShmOpDescriptor* descriptors, int members, const std::string& what) {
  for (int r = 1; r < members; ++r) {
    if (same(descriptors[r], descriptors[0])) continue;
    throw ProtocolError(what +
                        ": the group's members called different collectives: group rank 0 "
                        "passed " +
                        describe(descriptors[0]) + ", group rank " + std::to_string(r) +
                        " passed " + describe(descriptors[r]));
  }
}

}  // namespace strata

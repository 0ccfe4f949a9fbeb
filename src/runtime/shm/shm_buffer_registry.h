// Collective buffers of a shared-memory group: one segment per buffer, laid
// out as one region per member,
//   [ region of group rank 0 | region of rank 1 | ... ],  regionBytes each,
// so a tensor at byte `offset` of this member's region has its peers' copies
// at the same offset of theirs. The tensor handed out keeps its segment
// mapped; the registry only remembers it weakly, to recognise its views.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/shm/shm_segment.h"

namespace strata {

struct BufferPlacement {
  std::shared_ptr<SharedSegment> segment;
  uint32_t id;              // 1, 2, ... in allocation order: the same on every member
  std::size_t regionBytes;  // per member
  std::size_t offset;       // of the tensor, in bytes from its region's start
};

class CollectiveBufferRegistry {
 public:
  CollectiveBufferRegistry(int members, int rank) : members_(members), rank_(rank) {}

  // Bytes of one member's region for `numel` elements: whole pages.
  static std::size_t regionBytesFor(int64_t numel, std::size_t elementSize);

  // This member's region of `segment` as a tensor of `numel` elements.
  at::Tensor add(std::shared_ptr<SharedSegment> segment, int64_t numel, at::ScalarType dtype);

  // Where `tensor` lies, if it is a contiguous stretch of a live buffer.
  std::optional<BufferPlacement> find(const at::Tensor& tensor);

  // Every member's copy of a tensor shaped like `tensor`, placed at `where`.
  std::vector<at::Tensor> regions(const BufferPlacement& where, const at::Tensor& tensor) const;

 private:
  struct Entry {
    uint32_t id;
    std::weak_ptr<SharedSegment> segment;
    std::size_t regionBytes;
  };

  int members_;
  int rank_;
  std::mutex mutex_;
  std::vector<Entry> entries_;
  uint32_t lastId_ = 0;
};

}  // namespace strata

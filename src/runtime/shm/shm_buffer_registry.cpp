#include "runtime/shm/shm_buffer_registry.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace strata {
namespace {

constexpr std::size_t kRegistryPageBytes = 4096;

uint8_t* regionStart(const SharedSegment& segment, std::size_t regionBytes, int member) {
  return static_cast<uint8_t*>(segment.data()) + regionBytes * static_cast<std::size_t>(member);
}

}  // namespace

std::size_t CollectiveBufferRegistry::regionBytesFor(int64_t numel, std::size_t elementSize) {
  std::size_t bytes = static_cast<std::size_t>(numel) * elementSize;
  return std::max(kRegistryPageBytes,
                  (bytes + kRegistryPageBytes - 1) / kRegistryPageBytes * kRegistryPageBytes);
}

at::Tensor CollectiveBufferRegistry::add(std::shared_ptr<SharedSegment> segment, int64_t numel,
                                         at::ScalarType dtype) {
  std::size_t regionBytes = segment->size() / static_cast<std::size_t>(members_);
  void* mine = regionStart(*segment, regionBytes, rank_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back({++lastId_, segment, regionBytes});
  }
  // The deleter holds the segment: the mapping lives as long as any view.
  return at::from_blob(
      mine, {numel}, [segment](void*) {}, at::TensorOptions(dtype));
}

std::optional<BufferPlacement> CollectiveBufferRegistry::find(const at::Tensor& tensor) {
  if (!tensor.is_contiguous() || tensor.numel() == 0) return std::nullopt;
  const auto* begin = static_cast<const uint8_t*>(tensor.data_ptr());
  const uint8_t* end = begin + tensor.nbytes();
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [](const Entry& e) { return e.segment.expired(); }),
                 entries_.end());
  for (const Entry& entry : entries_) {
    std::shared_ptr<SharedSegment> segment = entry.segment.lock();
    if (!segment) continue;
    const uint8_t* start = regionStart(*segment, entry.regionBytes, rank_);
    if (begin >= start && end <= start + entry.regionBytes) {
      return BufferPlacement{segment, entry.id, entry.regionBytes,
                             static_cast<std::size_t>(begin - start)};
    }
  }
  return std::nullopt;
}

std::vector<at::Tensor> CollectiveBufferRegistry::regions(const BufferPlacement& where,
                                                          const at::Tensor& tensor) const {
  std::vector<at::Tensor> copies;
  for (int member = 0; member < members_; ++member) {
    uint8_t* start = regionStart(*where.segment, where.regionBytes, member) + where.offset;
    copies.push_back(
        at::from_blob(start, {tensor.numel()}, at::TensorOptions(tensor.scalar_type())));
  }
  return copies;
}

}  // namespace strata

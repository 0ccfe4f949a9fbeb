#include "large_block_cache.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <sys/mman.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace strata {

namespace {

constexpr size_t kGranule = size_t{2} << 20;  // a huge page

size_t roundedUp(size_t bytes) { return (bytes + kGranule - 1) / kGranule * kGranule; }

// Every cache's blocks in use, by data pointer: the raw deleter has nothing
// else to go on. Never destroyed, as blocks may be freed during static
// destruction.
struct BlocksInUse {
  std::mutex mutex;
  std::unordered_map<void*, std::pair<const LargeBlockCache*, size_t>> owners;
};

BlocksInUse& blocksInUse() {
  static auto* blocks = new BlocksInUse;
  return *blocks;
}

}  // namespace

LargeBlockCache::LargeBlockCache(size_t smallestBytes, size_t limitBytes)
    : smallestBytes_(smallestBytes), limitBytes_(limitBytes) {}

LargeBlockCache::~LargeBlockCache() {
  for (const Block& block : free_) munmap(block.data, block.bytes);
}

c10::DataPtr LargeBlockCache::allocate(size_t bytes) {
  if (bytes < smallestBytes_) return c10::GetDefaultCPUAllocator()->allocate(bytes);
  Block block = take(roundedUp(bytes));
  {
    BlocksInUse& inUse = blocksInUse();
    std::lock_guard<std::mutex> lock(inUse.mutex);
    inUse.owners[block.data] = {this, block.bytes};
  }
  return {block.data, block.data, &release, c10::Device(c10::DeviceType::CPU)};
}

size_t LargeBlockCache::cachedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cachedBytes_;
}

void LargeBlockCache::release(void* data) {
  std::pair<const LargeBlockCache*, size_t> owner{nullptr, 0};
  {
    BlocksInUse& inUse = blocksInUse();
    std::lock_guard<std::mutex> lock(inUse.mutex);
    auto it = inUse.owners.find(data);
    if (it != inUse.owners.end()) {
      owner = it->second;
      inUse.owners.erase(it);
    }
  }
  if (owner.first)
    owner.first->keep({data, owner.second});
  else  // a smaller block, handed out raw by the default allocator
    c10::GetDefaultCPUAllocator()->raw_deleter()(data);
}

// A kept block of exactly `bytes`, else a new mapping.
LargeBlockCache::Block LargeBlockCache::take(size_t bytes) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto kept = std::find_if(free_.rbegin(), free_.rend(),
                             [&](const Block& block) { return block.bytes == bytes; });
    if (kept != free_.rend()) {
      Block block = *kept;
      free_.erase(std::next(kept).base());
      cachedBytes_ -= bytes;
      return block;
    }
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  TORCH_CHECK(data != MAP_FAILED, "strata: cannot map ", bytes, " bytes for a CPU tensor");
  madvise(data, bytes, MADV_HUGEPAGE);  // a hint: fewer faults where the kernel allows
  return {data, bytes};
}

void LargeBlockCache::keep(Block block) const {
  std::vector<Block> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(block);
    cachedBytes_ += block.bytes;
    auto oldest = free_.begin();
    while (cachedBytes_ > limitBytes_) {
      cachedBytes_ -= oldest->bytes;
      released.push_back(*oldest++);
    }
    free_.erase(free_.begin(), oldest);
  }
  for (const Block& old : released) munmap(old.data, old.bytes);
}

}  // namespace strata

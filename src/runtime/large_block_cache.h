// A CPU allocator that keeps freed large blocks for the next allocation of
// the same size.
//
// glibc maps every block above its mmap threshold afresh, and the threshold
// cannot exceed 32 MiB (allocator_tuning.h): a wide layer's weight gradient
// or a micro-batch's logits are then fresh pages every step, each faulted in
// and zeroed by the kernel. On this machine bench_tp's serial MLP block
// (hidden 2048, FFN 8192: weight gradients of 64 MiB) took 1.01 and 1.09 s a
// step that way and 0.54 and 0.57 s from this cache.
//
// Blocks of at least `smallestBytes` are mapped here, rounded up to 2 MiB,
// with transparent huge pages requested (fewer faults on first touch), and
// kept when freed, up to `limitBytes` in all: past it the blocks freed
// longest ago are unmapped. Smaller blocks go to LibTorch's default CPU
// allocator. Thread-safe; a cache must outlive its blocks. allocate() throws
// c10::Error when the system has no memory to map.
#pragma once

#include <c10/core/Allocator.h>

#include <cstddef>
#include <mutex>
#include <vector>

#include "runtime/torch_version.h"

namespace strata {

class LargeBlockCache final : public c10::Allocator {
 public:
  LargeBlockCache(size_t smallestBytes, size_t limitBytes);
  ~LargeBlockCache() override;
  LargeBlockCache(const LargeBlockCache&) = delete;
  LargeBlockCache& operator=(const LargeBlockCache&) = delete;

  c10::DataPtr allocate(size_t bytes) override;
  void copy_data(void* dest, const void* src, size_t bytes) const override {
    default_copy_data(dest, src, bytes);
  }
  // LibTorch's raw_allocate hands out data pointers without their DataPtr;
  // this deleter finds a block's cache from the pointer alone.
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  // Bytes of freed blocks held for reuse.
  size_t cachedBytes() const;

 private:
  struct Block {
    void* data;
    size_t bytes;
  };

  static void release(void* data);
  Block take(size_t bytes) const;
  void keep(Block block) const;

  size_t smallestBytes_, limitBytes_;
  mutable std::mutex mutex_;
  mutable std::vector<Block> free_;  // oldest first
  mutable size_t cachedBytes_ = 0;
};

}  // namespace strata

// How this process's C heap hands memory back to the kernel.
//
// Training allocates and frees the same activation-sized blocks (hundreds of
// KiB to a few MiB) every micro-batch. glibc serves blocks above its mmap
// threshold with fresh mappings and trims the heap top when enough is free,
// so each new block is fresh pages the kernel must fault in and zero: on
// this machine a 1F1B step of the calibration GPT took 306k page faults and
// ran 20-30% slower than GPipe, whose allocation order happens to let the
// heap keep its pages. retainFreedMemory() raises both thresholds so freed
// blocks stay in the heap for the next micro-batch (127k faults, 1F1B no
// longer slower). Blocks of 32 MiB and more, the largest threshold glibc
// accepts, would still be mapped afresh: retainFreedMemory() makes LibTorch's
// CPU allocator keep those itself, up to 2 GiB of freed blocks
// (large_block_cache.h; bench_tp's wide MLP block then ran 1.8x as fast).
// The price is that memory freed by a step is not returned to the system
// until the process exits.
//
// World::init calls it; STRATA_RETAIN_FREED_MEMORY=0 opts out. Never blocks
// or throws; returns whether the thresholds were set.
#pragma once

namespace strata {

bool retainFreedMemory();

}  // namespace strata

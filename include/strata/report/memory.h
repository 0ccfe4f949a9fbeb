// Peak memory of this process: the resident-set high-water mark (VmHWM in
// /proc/self/status), which on CPU covers every tensor allocation, and on a
// GPU the CUDA allocator's own high-water mark.
//
// Reads a small procfs file: never blocks. Returns -1 where /proc is not
// available (not Linux) rather than throwing, since memory is only reported.
#pragma once

#include <cstdint>
#include <string>

namespace strata::train {

int64_t peakResidentBytes();
// The most memory LibTorch's CUDA allocator has handed out on the current GPU
// since the process started (its tensors; not the CUDA context or the
// allocator's cached free blocks); -1 without CUDA.
int64_t peakCudaBytes();
// The value of a "Key:   123 kB" line of a /proc status text, in bytes; -1
// when the key is missing or malformed.
int64_t statusBytes(const std::string& statusText, const std::string& key);

}  // namespace strata::train

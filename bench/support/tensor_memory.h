// Counts CPU tensor memory by wrapping LibTorch's CPU allocator: the bytes
// live now and at most since the last resetPeakTensorBytes(), whatever
// allocated them (autograd's gradients and saved activations included), so a
// benchmark can take apart a peak that the resident set size blurs (glibc
// keeps freed memory mapped). Install before the tensors to count are made;
// tensors made earlier are neither counted nor miscounted. Nothing blocks or
// throws beyond what the wrapped allocator throws.
#pragma once

#include <cstdint>

namespace strata::bench {

// Idempotent; later CPU allocations go through the counter.
void installTensorMemoryCounter();
int64_t liveTensorBytes();
int64_t peakTensorBytes();
// Starts a new peak from what is live now.
void resetPeakTensorBytes();

}  // namespace strata::bench

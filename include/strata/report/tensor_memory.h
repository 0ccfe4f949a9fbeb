// Counts CPU tensor memory by wrapping LibTorch's CPU allocator: the bytes
// live now and at most since the last resetPeakTensorBytes(), whatever
// allocated them (autograd's gradients and saved activations included), so a
// benchmark or a test can take apart a peak that the resident set size blurs
// (glibc keeps freed memory mapped). The counts are the bytes asked for, not
// what the allocator rounds them to: on one rank they depend only on what
// the code allocates, not on timing or on other processes.
//
// Install before the tensors to count are made; tensors made earlier are
// neither counted nor miscounted. Memory that does not come from LibTorch's
// CPU allocator (shared-memory collective buffers, memory-mapped datasets,
// Gloo's own buffers) is not counted. Nothing blocks or throws beyond what
// the wrapped allocator throws.
#pragma once

#include <cstdint>

namespace strata::train {

// Idempotent; later CPU allocations go through the counter.
void installTensorMemoryCounter();
int64_t liveTensorBytes();
int64_t peakTensorBytes();
// Starts a new peak from what is live now.
void resetPeakTensorBytes();

}  // namespace strata::train

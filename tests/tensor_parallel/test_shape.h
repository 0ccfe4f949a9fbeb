// The shape the tensor-parallel tests share: small enough for a 2-core
// machine, divisible by tp 2 and 4 in every dimension that is split.
#pragma once

#include <cstdint>

namespace strata::tensor_parallel {

inline constexpr int64_t kSeq = 8, kBatch = 2, kHidden = 16, kHeads = 4, kFfn = 32, kVocab = 32;

}  // namespace strata::tensor_parallel

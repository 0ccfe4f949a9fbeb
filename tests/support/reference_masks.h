// The seeded dropout recipe the references share (strata/tensor_parallel/
// dropout.h documents it; the masks are drawn here, with plain LibTorch):
// every site has its own seed stream, derived by splitmix64 of (seed,
// stream); call c of a site draws keep ~ Bernoulli(1 - p) from a generator
// seeded with splitmix(site seed, c), in the shape Strata's layers hold.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace strata::testing {

// splitmix64 of (seed, stream), as strata/tensor_parallel/init.h derives seeds.
uint64_t splitmix(uint64_t seed, uint64_t stream);

// keep ~ Bernoulli(1 - p) of `shape`, float, from a generator seeded with `seed`.
torch::Tensor bernoulliKeep(at::IntArrayRef shape, double p, uint64_t seed);

}  // namespace strata::testing

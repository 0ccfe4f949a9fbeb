#include "reference_masks.h"

#include <ATen/CPUGeneratorImpl.h>

namespace strata::testing {

uint64_t splitmix(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

torch::Tensor bernoulliKeep(at::IntArrayRef shape, double p, uint64_t seed) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::empty(shape, torch::kFloat).bernoulli_(1.0 - p, generator);
}

}  // namespace strata::testing

#include "strata/tensor_parallel/init.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "strata/error.h"

namespace strata::tensor_parallel {

uint64_t deriveSeed(uint64_t seed, uint64_t stream) {
  // splitmix64 of (seed, stream): nearby inputs give unrelated outputs.
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

InitOptions deriveInit(const InitOptions& init, uint64_t stream) {
  InitOptions derived = init;
  derived.seed = deriveSeed(init.seed, stream);
  return derived;
}

at::Tensor seededNormal(at::IntArrayRef shape, uint64_t seed, double std, bool draw) {
  if (!draw) return at::empty(shape, at::TensorOptions().dtype(at::kFloat));
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::normal(0.0, std, shape, generator, at::TensorOptions().dtype(at::kFloat));
}

at::Tensor shardOf(const at::Tensor& full, int64_t dim, int part, int parts) {
  int64_t size = full.size(dim);
  if (parts < 1 || part < 0 || part >= parts || size % parts != 0) {
    throw ConfigError("cannot take part " + std::to_string(part) + " of " + std::to_string(parts) +
                      " along dimension " + std::to_string(dim) + " of size " +
                      std::to_string(size));
  }
  if (parts == 1 && full.is_contiguous()) return full;
  int64_t length = size / parts;
  return full.narrow(dim, length * part, length).clone(at::MemoryFormat::Contiguous);
}

int64_t paddedToMultiple(int64_t size, int multiple) {
  return (size + multiple - 1) / multiple * multiple;
}

at::Tensor padRows(const at::Tensor& full, int64_t rows) {
  if (rows == full.size(0)) return full;
  std::vector<int64_t> padding = full.sizes().vec();
  padding[0] = rows - full.size(0);
  return at::cat({full, at::zeros(padding, full.options())}, 0);
}

}  // namespace strata::tensor_parallel

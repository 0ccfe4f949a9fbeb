#include "strata/tensor_parallel/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "strata/error.h"
#include "strata/tensor_parallel/init.h"

namespace strata::tensor_parallel {
namespace {

// keep ~ Bernoulli(1 - p), drawn from a generator seeded with `seed`.
at::Tensor keepMask(at::IntArrayRef shape, double p, uint64_t seed) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::empty(shape, at::TensorOptions().dtype(at::kFloat)).bernoulli_(1.0 - p, generator);
}

}  // namespace

SeededDropout::SeededDropout(double p, uint64_t seed)
    : p_(p), seed_(seed), calls_(torch::zeros({1}, torch::kLong)) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw ConfigError("dropout probability " + std::to_string(p) + " is outside [0, 1)");
  }
}

uint64_t SeededDropout::nextCallSeed() {
  if (!calls_.is_cpu()) {
    // The counter is a module buffer, so it follows the module to a GPU.
    int64_t calls = calls_.item<int64_t>();
    calls_.add_(1);
    return deriveSeed(seed_, static_cast<uint64_t>(calls));
  }
  int64_t& calls = calls_.data_ptr<int64_t>()[0];
  return deriveSeed(seed_, static_cast<uint64_t>(calls++));
}

// y = x * keep / (1 - p), so E[y] = x.
at::Tensor SeededDropout::applyMask(const at::Tensor& x, const at::Tensor& keep) const {
  return x * keep.to(x.device(), x.scalar_type()) * (1.0 / (1.0 - p_));
}

at::Tensor SeededDropout::replicated(const at::Tensor& x, bool training) {
  if (!training || p_ == 0.0) return x;
  return applyMask(x, keepMask(x.sizes(), p_, nextCallSeed()));
}

at::Tensor SeededDropout::sequenceSharded(const at::Tensor& x, bool training,
                                          const Communicator& tp) {
  if (!training || p_ == 0.0) return x;
  std::vector<int64_t> fullShape = x.sizes().vec();
  fullShape[0] *= tp.size();
  at::Tensor keep = keepMask(fullShape, p_, nextCallSeed());
  return applyMask(x, keep.narrow(0, x.size(0) * tp.rank(), x.size(0)));
}

at::Tensor SeededDropout::sliced(const at::Tensor& x, int64_t dim, int64_t first, int64_t whole,
                                 bool training) {
  if (!training || p_ == 0.0) return x;
  std::vector<int64_t> fullShape = x.sizes().vec();
  fullShape[dim] = whole;
  // A copy of the slice, so that backward keeps the slice's mask alone.
  at::Tensor keep = keepMask(fullShape, p_, nextCallSeed()).narrow(dim, first, x.size(dim)).clone();
  return applyMask(x, keep);
}

at::Tensor SeededDropout::unitSharded(const at::Tensor& x, int64_t dim, int64_t first,
                                      bool training) {
  if (!training || p_ == 0.0) return x;
  uint64_t callSeed = nextCallSeed();
  std::vector<int64_t> unitShape = x.sizes().vec();
  unitShape.erase(unitShape.begin() + dim);
  std::vector<at::Tensor> masks;
  for (int64_t unit = 0; unit < x.size(dim); ++unit) {
    masks.push_back(keepMask(unitShape, p_, deriveSeed(callSeed, first + unit)));
  }
  return applyMask(x, at::stack(masks, dim));
}

void setDropoutCalls(torch::nn::Module& module, int64_t calls) {
  static const std::string kSuffix = "dropout_calls";
  for (auto& buffer : module.named_buffers()) {
    const std::string& name = buffer.key();
    if (name.size() >= kSuffix.size() &&
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
      buffer.value().fill_(calls);
    }
  }
}

}  // namespace strata::tensor_parallel

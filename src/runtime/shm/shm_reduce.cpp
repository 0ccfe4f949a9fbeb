#include "runtime/shm/shm_reduce.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <algorithm>
#include <type_traits>

namespace strata {
namespace {

// Elements reduced at a time: the partial result (16 KiB of doubles at most)
// stays in L1 while every part is read into it and, for an all-reduce,
// written back out of it. One pass over each part, each way: this loop is
// bound by memory traffic, not arithmetic.
constexpr int64_t kStripe = 2048;

template <typename T>
bool isNan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return v != v;
  }
}

// Element-wise combine with ATen's semantics: max and min propagate NaN.
// The op is a template argument so the inner loops carry no branch on it.
template <ReduceOp Op, typename T>
T combine(T a, T b) {
  if constexpr (Op == ReduceOp::kMax) {
    return isNan(a) ? a : (isNan(b) || b > a ? b : a);
  } else if constexpr (Op == ReduceOp::kMin) {
    return isNan(a) ? a : (isNan(b) || b < a ? b : a);
  } else {
    return static_cast<T>(a + b);
  }
}

template <ReduceOp Op, typename T>
T average(T sum, std::size_t count) {
  if constexpr (Op == ReduceOp::kAvg) {
    return static_cast<T>(sum / static_cast<T>(count));
  } else {
    return sum;
  }
}

// acc[0, len) = reduce_j parts[j][base, base + len), in j order; kAvg
// divides the sum by the number of parts.
template <ReduceOp Op, typename T>
void reduceStripe(T* acc, const std::vector<T*>& parts, int64_t base, int64_t len) {
  const T* first = parts[0] + base;
  if (parts.size() == 1) {
    std::copy(first, first + len, acc);
    return;
  }
  const T* second = parts[1] + base;
  for (int64_t i = 0; i < len; ++i) acc[i] = combine<Op>(first[i], second[i]);
  for (std::size_t j = 2; j < parts.size(); ++j) {
    const T* part = parts[j] + base;
    for (int64_t i = 0; i < len; ++i) acc[i] = combine<Op>(acc[i], part[i]);
  }
  if constexpr (Op == ReduceOp::kAvg) {
    for (int64_t i = 0; i < len; ++i) acc[i] = average<Op>(acc[i], parts.size());
  }
}

// Two members, the usual pair of data-parallel ranks on one host: one pass,
// two loads and two stores per element, no partial result in between.
template <ReduceOp Op, typename T>
void reducePairIntoBoth(T* __restrict a, T* __restrict b, int64_t numel) {
  for (int64_t i = 0; i < numel; ++i) {
    T v = average<Op>(combine<Op>(a[i], b[i]), 2);
    a[i] = v;
    b[i] = v;
  }
}

// out may be parts[0]: each stripe is read whole before it is written.
template <ReduceOp Op, typename T>
void reduceIntoTyped(T* out, const std::vector<T*>& parts, int64_t numel) {
  for (int64_t base = 0; base < numel; base += kStripe) {
    reduceStripe<Op>(out + base, parts, base, std::min(kStripe, numel - base));
  }
}

template <ReduceOp Op, typename T>
void reduceIntoAllTyped(const std::vector<T*>& parts, int64_t numel) {
  if (parts.size() == 2) return reducePairIntoBoth<Op>(parts[0], parts[1], numel);
  T acc[kStripe];
  for (int64_t base = 0; base < numel; base += kStripe) {
    int64_t len = std::min(kStripe, numel - base);
    reduceStripe<Op>(acc, parts, base, len);
    for (T* part : parts) std::copy(acc, acc + len, part + base);
  }
}

// Calls body(std::integral_constant<ReduceOp, op>{}).
template <typename Body>
void withOp(ReduceOp op, Body&& body) {
  switch (op) {
    case ReduceOp::kSum:
      return body(std::integral_constant<ReduceOp, ReduceOp::kSum>{});
    case ReduceOp::kAvg:
      return body(std::integral_constant<ReduceOp, ReduceOp::kAvg>{});
    case ReduceOp::kMax:
      return body(std::integral_constant<ReduceOp, ReduceOp::kMax>{});
    case ReduceOp::kMin:
      return body(std::integral_constant<ReduceOp, ReduceOp::kMin>{});
  }
}

// Each part's data from element `start` on.
template <typename T>
std::vector<T*> pointers(const std::vector<at::Tensor>& parts, int64_t start = 0) {
  std::vector<T*> raw;
  for (const at::Tensor& part : parts) raw.push_back(part.data_ptr<T>() + start);
  return raw;
}

std::vector<at::Tensor> slices(const std::vector<at::Tensor>& regions, int64_t start,
                               int64_t length) {
  std::vector<at::Tensor> parts;
  for (const at::Tensor& region : regions) parts.push_back(region.narrow(0, start, length));
  return parts;
}

}  // namespace

void reduceInto(at::Tensor& out, const std::vector<at::Tensor>& parts, ReduceOp op) {
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "shm_reduce_into", [&] {
    withOp(op, [&](auto kOp) {
      reduceIntoTyped<decltype(kOp)::value>(out.data_ptr<scalar_t>(), pointers<scalar_t>(parts),
                                            out.numel());
    });
  });
}

std::pair<int64_t, int64_t> shareOf(int64_t length, int rank, int n) {
  int64_t per = (length + n - 1) / n;
  int64_t lo = std::min(length, rank * per);
  return {lo, std::min(length, lo + per)};
}

void reduceRangeIntoAll(const std::vector<at::Tensor>& regions, int64_t start, int64_t length,
                        ReduceOp op) {
  AT_DISPATCH_ALL_TYPES_AND2(
      at::kHalf, at::kBFloat16, regions[0].scalar_type(), "shm_reduce_range", [&] {
        withOp(op, [&](auto kOp) {
          reduceIntoAllTyped<decltype(kOp)::value>(pointers<scalar_t>(regions, start), length);
        });
      });
}

void reduceScatterFromRegions(at::Tensor& out, const std::vector<at::Tensor>& regions, int rank,
                              ReduceOp op) {
  int64_t k = out.numel();
  reduceInto(out, slices(regions, rank * k, k), op);
}

}  // namespace strata

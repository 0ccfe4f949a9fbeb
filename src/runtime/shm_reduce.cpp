#include "shm_reduce.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace strata {
namespace {

// A share is reduced in pieces this large, so the partial result stays in
// cache while it is written back to every region.
constexpr int64_t kPieceBytes = int64_t{256} << 10;

// out = a (op) b
void combineInto(at::Tensor& out, const at::Tensor& a, const at::Tensor& b, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      at::add_out(out, a, b);
      break;
    case ReduceOp::kMax:
      at::maximum_out(out, a, b);
      break;
    case ReduceOp::kMin:
      at::minimum_out(out, a, b);
      break;
  }
}

// out = reduce_j parts[j], in j order; kAvg divides by the count.
void reduceParts(at::Tensor& out, const std::vector<at::Tensor>& parts, ReduceOp op) {
  if (parts.size() == 1) {
    out.copy_(parts[0]);
  } else {
    combineInto(out, parts[0], parts[1], op);
  }
  for (std::size_t j = 2; j < parts.size(); ++j) combine(out, parts[j], op);
  if (op == ReduceOp::kAvg) out.div_(static_cast<int64_t>(parts.size()));
}

std::vector<at::Tensor> slices(const std::vector<at::Tensor>& regions, int64_t start,
                               int64_t length) {
  std::vector<at::Tensor> parts;
  for (const at::Tensor& region : regions) parts.push_back(region.narrow(0, start, length));
  return parts;
}

}  // namespace

void combine(at::Tensor& acc, const at::Tensor& other, ReduceOp op) {
  combineInto(acc, acc, other, op);
}

std::pair<int64_t, int64_t> shareOf(int64_t length, int rank, int n) {
  int64_t per = (length + n - 1) / n;
  int64_t lo = std::min(length, rank * per);
  return {lo, std::min(length, lo + per)};
}

void allReduceShareInPlace(const std::vector<at::Tensor>& regions, int rank, ReduceOp op) {
  int n = static_cast<int>(regions.size());
  auto [lo, hi] = shareOf(regions[0].numel(), rank, n);
  if (hi <= lo) return;
  int64_t piece = std::max<int64_t>(1, kPieceBytes / regions[0].element_size());
  at::Tensor scratch = at::empty({std::min(piece, hi - lo)}, regions[0].options());
  for (int64_t start = lo; start < hi; start += piece) {
    int64_t length = std::min(piece, hi - start);
    at::Tensor result = scratch.narrow(0, 0, length);
    std::vector<at::Tensor> parts = slices(regions, start, length);
    reduceParts(result, parts, op);
    for (at::Tensor& part : parts) part.copy_(result);
  }
}

void reduceScatterFromRegions(at::Tensor& out, const std::vector<at::Tensor>& regions, int rank,
                              ReduceOp op) {
  int64_t k = out.numel();
  at::Tensor flat = out.view({-1});
  reduceParts(flat, slices(regions, rank * k, k), op);
}

}  // namespace strata

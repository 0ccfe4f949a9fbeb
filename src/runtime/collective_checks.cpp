#include "collective_checks.h"

#include <c10/util/Exception.h>

#include "strata/error.h"

namespace strata {

void requireContiguous(const at::Tensor& tensor, const char* op, const std::string& group) {
  if (!tensor.is_contiguous()) {
    throw Error(std::string(op) + " on group " + group +
                " needs a contiguous tensor to write into");
  }
}

void checkAverageable(const at::Tensor& tensor, ReduceOp op, const char* what,
                      const std::string& group) {
  if (op == ReduceOp::kAvg && !tensor.is_floating_point()) {
    throw Error(std::string(what) + " on group " + group +
                ": averaging needs a floating-point tensor");
  }
}

void checkStacked(const at::Tensor& big, const at::Tensor& small, const char* op,
                  const char* bigName, const char* smallName, const std::string& group,
                  int groupSize) {
  bool ok = big.dim() == small.dim() && big.dim() > 0 && big.scalar_type() == small.scalar_type();
  for (int64_t d = 1; ok && d < big.dim(); ++d) ok = big.size(d) == small.size(d);
  ok = ok && big.size(0) == small.size(0) * groupSize;
  if (!ok) {
    throw Error(std::string(op) + " on group " + group + ": " + bigName + " " +
                c10::str(big.sizes()) + " must be " + smallName + " " + c10::str(small.sizes()) +
                " stacked " + std::to_string(groupSize) + " times along dimension 0, same dtype");
  }
}

}  // namespace strata

// Argument checks every Communicator implementation applies before starting a
// collective, so a misuse reads the same whatever the transport. Each throws
// strata::Error naming the operation and the group.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "strata/runtime/communicator.h"

namespace strata {

void requireContiguous(const at::Tensor& tensor, const char* op, const std::string& group);
void checkAverageable(const at::Tensor& tensor, ReduceOp op, const char* what,
                      const std::string& group);
// `big` must be `small` stacked `groupSize` times along dimension 0, same dtype.
void checkStacked(const at::Tensor& big, const at::Tensor& small, const char* op,
                  const char* bigName, const char* smallName, const std::string& group,
                  int groupSize);

}  // namespace strata

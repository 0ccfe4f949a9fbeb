#include "strata/models/hugging_face.h"

namespace strata::models {

at::Tensor narrowedBlock(at::Tensor t, const std::vector<int64_t>& offset,
                         const std::vector<int64_t>& length, int64_t firstDim) {
  for (size_t d = static_cast<size_t>(firstDim); d < offset.size(); ++d)
    t = t.narrow(static_cast<int64_t>(d), offset[d], length[d]);
  return t.contiguous();
}

}  // namespace strata::models

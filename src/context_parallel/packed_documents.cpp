#include "strata/context_parallel/packed_documents.h"

#include <torch/torch.h>

#include <string>

#include "strata/error.h"

namespace strata::context_parallel {

void PackedDocuments::setBatch(const at::Tensor& segments, int microbatches) {
  if (!segments.defined() || segments.dim() != 2 || microbatches < 1 ||
      segments.size(0) % microbatches != 0)
    throw ConfigError("packed documents: segments of shape " +
                      (segments.defined() ? c10::str(segments.sizes()) : std::string("(none)")) +
                      " do not split into " + std::to_string(microbatches) +
                      " equal micro-batches of rows");
  microbatches_ = segments.chunk(microbatches, 0);
  selected_ = at::Tensor();
}

void PackedDocuments::select(int microbatch) {
  if (microbatches_.empty()) return;
  if (microbatch < 0 || microbatch >= static_cast<int>(microbatches_.size()))
    throw ConfigError("packed documents: micro-batch " + std::to_string(microbatch) +
                      " is outside the batch's " + std::to_string(microbatches_.size()));
  selected_ = microbatches_[static_cast<size_t>(microbatch)];
}

void PackedDocuments::clear() {
  microbatches_.clear();
  selected_ = at::Tensor();
}

at::Tensor documentPositions(const at::Tensor& segments) {
  int64_t s = segments.size(1);
  at::Tensor index = at::arange(s, segments.options()).expand_as(segments);  // [b, S]
  // A segment starts where it differs from the token before (token 0 always).
  at::Tensor starts = at::ones_like(segments, segments.options().dtype(at::kBool));
  if (s > 1) starts.narrow(1, 1, s - 1).copy_(segments.diff(1, 1).ne(0));
  // The latest start at or before each token: its segment's first index.
  at::Tensor first = std::get<0>(at::where(starts, index, at::zeros_like(index)).cummax(1));
  return index - first;
}

at::Tensor documentCausalMask(const at::Tensor& segments) {
  int64_t s = segments.size(1);
  at::Tensor same = segments.unsqueeze(2).eq(segments.unsqueeze(1));  // [b, S, S]
  at::Tensor past = at::ones({s, s}, segments.options().dtype(at::kBool)).tril();
  return same.logical_and(past).unsqueeze(1);  // [b, 1, S, S]
}

}  // namespace strata::context_parallel

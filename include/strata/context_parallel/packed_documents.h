// Packed documents: several documents share one training sequence without
// seeing each other (data.pack). Each token carries its document's number
// within the sequence (its segment); attention lets a query see only the
// earlier keys of its own segment, and positions (learned or rotary)
// restart at each segment's first token, so every document trains as it
// would alone.
//
//   PackedDocuments documents;                    // shared by the model's layers
//   documents.setBatch(batch.segments, microbatches);   // the trainer, per step
//   documents.select(m);        // the pipeline, before micro-batch m's forward
//   at::Tensor segments = documents.segments();   // the attention: [b, S]
//
// The segments are whole sequences' (a context-parallel rank's share is
// taken from them where it is needed), on the CPU or any device. The layers
// read the selected micro-batch's when their forward runs; what backward
// needs (masks, rotary tables) is saved by that forward, so select() only
// has to come before each forward, the recompute of activation
// checkpointing included. Not thread-safe: one executor selects and runs.
// Nothing here blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace strata::context_parallel {

class PackedDocuments {
 public:
  // segments [B, S] int64, nondecreasing along each row, cut into
  // `microbatches` equal micro-batches of rows as the pipeline cuts the
  // batch; selects none. Throws ConfigError when the rows do not split.
  void setBatch(const at::Tensor& segments, int microbatches);
  // Throws ConfigError for a micro-batch outside the batch set.
  void select(int microbatch);
  // No batch: every sequence one document (profiling, evaluation of text).
  void clear();
  // [b, S] int64 of the selected micro-batch; undefined when none is.
  const at::Tensor& segments() const { return selected_; }

 private:
  std::vector<at::Tensor> microbatches_;
  at::Tensor selected_;
};

// Each token's position within its document: [b, S] -> [b, S] int64,
// counting from 0 at each segment's first token.
at::Tensor documentPositions(const at::Tensor& segments);

// Whether query i may attend key j of the same sequence: the same segment
// and j <= i. [b, S] -> [b, 1, S, S] bool (broadcast over heads).
at::Tensor documentCausalMask(const at::Tensor& segments);

}  // namespace strata::context_parallel

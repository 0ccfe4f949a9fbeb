#include "train/packed_batch.h"

namespace strata::train {

pipeline::StepHooks packedDocumentHooks(context_parallel::PackedDocuments* documents,
                                        const Batch& batch, int64_t microBatches) {
  pipeline::StepHooks hooks;
  if (!documents) return hooks;
  documents->setBatch(batch.segments, static_cast<int>(microBatches));
  hooks.beforeForward = [documents](int m) { documents->select(m); };
  return hooks;
}

}  // namespace strata::train

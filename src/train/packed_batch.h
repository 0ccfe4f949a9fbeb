// The trainer's side of packed documents (data.pack): each batch's documents
// handed to the model's shared PackedDocuments (packed_documents.h), each
// micro-batch's selected by the pipeline before its forward and recompute,
// and cleared when the step or evaluation ends. Nothing blocks or throws
// beyond PackedDocuments::setBatch's ConfigError for a batch whose rows do
// not split into the micro-batches.
#pragma once

#include "strata/context_parallel/packed_documents.h"
#include "strata/data/text_dataset.h"
#include "strata/pipeline/executor.h"

namespace strata::train {

// Hooks whose beforeForward selects micro-batch m of `batch`'s documents,
// set into `documents` here (the whole sequences' on every rank, cp ranks
// included: attention takes its share where it needs one); empty hooks
// when `documents` is null (not packing).
pipeline::StepHooks packedDocumentHooks(context_parallel::PackedDocuments* documents,
                                        const Batch& batch, int64_t microBatches);

// Clears the documents when a step or evaluation ends, however it ends, so
// that no later forward (a profile, sampling) reads them.
class SelectedDocuments {
 public:
  explicit SelectedDocuments(context_parallel::PackedDocuments* documents)
      : documents_(documents) {}
  ~SelectedDocuments() {
    if (documents_) documents_->clear();
  }
  SelectedDocuments(const SelectedDocuments&) = delete;
  SelectedDocuments& operator=(const SelectedDocuments&) = delete;

 private:
  context_parallel::PackedDocuments* documents_;
};

}  // namespace strata::train

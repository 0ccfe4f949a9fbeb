#include "strata/data_parallel/zero_optimizer.h"

#include <torch/torch.h>

#include "strata/error.h"

namespace strata::data_parallel {

ZeroOptimizer::ZeroOptimizer(DataParallel& dp, std::unique_ptr<FlatOptimizer> optimizer)
    : dp_(dp), optimizer_(std::move(optimizer)) {
  if (!optimizer_) throw ConfigError("ZeroOptimizer needs an optimizer");
  const BucketLayout& layout = dp_.layout();
  std::vector<int64_t> chunkNumels;
  for (int b = 0; b < static_cast<int>(layout.buckets().size()); ++b) {
    chunkNumels.push_back(layout.chunkNumel(b));
  }
  at::TensorOptions type = dp_.parameters()[0].options().requires_grad(false);
  optimizer_->allocate(chunkNumels, type);
  flatParams_ = torch::zeros({layout.totalNumel()}, type);
}

std::vector<FlatStateSlot> ZeroOptimizer::stateSlots() const {
  const BucketLayout& layout = dp_.layout();
  std::vector<FlatStateSlot> slots;
  for (size_t j = 0; j < dp_.parameters().size(); ++j) {
    const ParamSlot& slot = layout.slot(static_cast<int>(j));
    slots.push_back({dp_.parameters()[j], "." + std::to_string(slot.bucket), slot.offset,
                     layout.chunkOffset(slot.bucket, dp_.comm().rank()),
                     layout.chunkNumel(slot.bucket)});
  }
  return slots;
}

int ZeroOptimizer::stage() const {
  return dp_.options().reduction == GradientReduction::kReduceScatter ? 2 : 1;
}

void ZeroOptimizer::zeroGrad() { dp_.zeroGrad(); }

void ZeroOptimizer::step() {
  dp_.finishGradientSync();
  stepAfterSync();
}

void ZeroOptimizer::stepAfterSync() {
  gatherParameters();
  const BucketLayout& layout = dp_.layout();
  Communicator& comm = dp_.comm();
  int numBuckets = static_cast<int>(layout.buckets().size());
  optimizer_->beginStep();
  std::vector<at::Tensor> updated;  // this rank's chunks, copied: all-gather must not alias
  for (int b = 0; b < numBuckets; ++b) {
    at::Tensor chunk =
        flatParams_.narrow(0, layout.chunkOffset(b, comm.rank()), layout.chunkNumel(b));
    optimizer_->update(b, chunk, dp_.ownedGradient(b));
    updated.push_back(chunk.clone());
  }
  std::vector<at::Tensor> outputs;
  std::vector<WorkHandle> works;
  for (int b = 0; b < numBuckets; ++b) {
    const Bucket& bucket = layout.buckets()[b];
    outputs.push_back(flatParams_.narrow(0, bucket.offset, bucket.paddedNumel));
    works.push_back(comm.allGatherAsync(outputs.back(), updated[b]));
  }
  for (WorkHandle& work : works) work->wait();
  scatterParameters();
}

// Parameters -> flat buffer (padding stays zero).
void ZeroOptimizer::gatherParameters() {
  torch::NoGradGuard noGrad;
  const std::vector<at::Tensor>& params = dp_.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSlot& slot = dp_.layout().slot(static_cast<int>(i));
    flatParams_.narrow(0, slot.offset, slot.numel).view(params[i].sizes()).copy_(params[i]);
  }
}

// Flat buffer -> parameters.
void ZeroOptimizer::scatterParameters() {
  torch::NoGradGuard noGrad;
  const std::vector<at::Tensor>& params = dp_.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSlot& slot = dp_.layout().slot(static_cast<int>(i));
    params[i].detach().copy_(
        flatParams_.narrow(0, slot.offset, slot.numel).view(params[i].sizes()));
  }
}

}  // namespace strata::data_parallel

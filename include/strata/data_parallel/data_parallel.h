// Data parallelism: replicas of a model (or of a pipeline stage, or of a
// tensor-parallel shard) each see their own slice of the batch; gradients are
// averaged over the replica group before every optimizer step,
//   g = (1/R) sum_r g_r,
// which equals the gradient of the mean loss over the concatenated batch.
//
// Only `comm` is used (pass the dp communicator of ParallelGroups), so the
// same code serves every layout.
//
// Construction is a collective. Options are validated first (ConfigError on
// every rank alike, before any communication); then the replicas' parameter
// structure is compared (ConfigError on mismatch); then parameters (and a
// module's buffers) are broadcast from group rank 0, or checked equal
// (ConfigError naming the first differing parameter).
//
// Gradients live in one flat buffer cut into buckets (see bucket_layout.h);
// each parameter's .grad aliases its slice, so autograd accumulates straight
// into the buffer. optimizer.zero_grad(), module.zero_grad() (also with
// set_to_none) and zeroGrad() all keep working; a .grad replaced by a fresh
// tensor is copied back into the buffer when its next gradient arrives. That
// copy is one more pass over the gradients a step: LibTorch 2.x's
// zero_grad() sets gradients to none by default, so call zeroGrad() or
// zero_grad(/*set_to_none=*/false) to have autograd accumulate in place. A hook on each parameter's
// gradient accumulator counts the bucket's arrivals during backward; when a bucket is complete its
// all-reduce starts asynchronously (buckets start in index order, so every
// replica issues the same sequence of collectives). finishGradientSync()
// blocks until every bucket is reduced, at most the communicator's timeout
// each (TimeoutError / PeerError), and must run between backward and the
// optimizer step.
//
// Gradient accumulation: backward passes run under noSync() (or
// setRequireSync(false)) only accumulate; the next synchronised backward and
// finishGradientSync() reduce the sum.
//
// Parameters that receive no gradient since the last sync: by default
// finishGradientSync() throws Error naming them (the usual cause is a layer
// built but not called). With UnusedParameters::kTreatAsZero they contribute
// zero; a parameter that no replica used keeps an undefined .grad, exactly as
// in single-process training, so optimizers skip it. That mode costs one small
// extra all-reduce per step (the usage map).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "strata/data_parallel/bucket_layout.h"
#include "strata/data_parallel/replica_sync.h"
#include "strata/runtime/communicator.h"

namespace strata::data_parallel {

enum class InitialSync { kBroadcast, kCheckEqual };
enum class UnusedParameters { kError, kTreatAsZero };
// kAllReduce leaves every replica the full averaged gradient. kReduceScatter
// (ZeRO-2) leaves each rank only the averaged chunks it owns (ownedGradient);
// the parameters' .grad then hold local, unreduced values.
enum class GradientReduction { kAllReduce, kReduceScatter };

struct DataParallelOptions {
  BucketSizes buckets;
  InitialSync initialSync = InitialSync::kBroadcast;
  UnusedParameters unusedParameters = UnusedParameters::kError;
  GradientReduction reduction = GradientReduction::kAllReduce;
};

class DataParallel {
 public:
  // Synchronises `module`'s parameters (names from named_parameters) and
  // buffers. The module must outlive this object.
  DataParallel(torch::nn::Module& module, Communicator& comm, DataParallelOptions options = {});
  // Parameters that do not require grad are ignored. All must share a dtype.
  DataParallel(std::vector<NamedTensor> parameters, Communicator& comm,
               DataParallelOptions options = {});
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // Waits for every bucket's reduction; see the contract above.
  void finishGradientSync();
  // Zeroes every gradient at once (the flat buffer) and rebinds each .grad to it.
  void zeroGrad();

  void setRequireSync(bool requireSync);
  bool requireSync() const;

  // Backward passes inside the scope only accumulate gradients locally.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DataParallel& owner);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DataParallel& owner_;
    bool previous_;
  };
  NoSyncGuard noSync() { return NoSyncGuard(*this); }

  const BucketLayout& layout() const;
  const std::vector<at::Tensor>& parameters() const;
  Communicator& comm() const;
  const DataParallelOptions& options() const;
  // Buckets whose reduction has started since the last finishGradientSync()
  // (all of them right after a synchronised backward that reached every
  // parameter): a window onto how much communication overlaps backward.
  int startedBuckets() const;
  // This rank's averaged chunk of bucket b (1-D, layout().chunkNumel(b)),
  // valid after finishGradientSync().
  at::Tensor ownedGradient(int bucket) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::data_parallel

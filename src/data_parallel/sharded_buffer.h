// Internal: parameters of one dtype laid out in one flat buffer padded to a
// multiple of R = comm.size(); rank r owns the contiguous chunk r, its shard,
// and the buffer holds memory only while gathered (the parameters keep their
// shapes, set onto its storage). FullyShardedDataParallel keeps a unit's
// trained parameters in one and its frozen ones in one per dtype.
//
// gather() starts an all-gather that wait() and release() wait for, within
// the communicator's timeout (TimeoutError / PeerError). The counts each
// method returns are bytes, for the owner's memory accounting.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "strata/data_parallel/bucket_layout.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/runtime/communicator.h"

namespace strata::data_parallel {

class ShardedBuffer {
 public:
  ShardedBuffer() = default;
  // One bucket of `params` (none when empty) over `shards` ranks.
  ShardedBuffer(std::vector<NamedTensor> params, int shards);

  // Copies rank `rank`'s chunk out of the parameters, drops their values,
  // points them at the buffer's storage and releases it: the values and the
  // buffer never coexist. Returns the shard's bytes.
  int64_t shardValues(int rank);
  // Gives the buffer its memory and starts the gather into it; returns the
  // bytes it takes (0 when already held or empty).
  int64_t gather(Communicator& comm);
  // Waits for a started gather; returns the seconds waited.
  double wait();
  // Waits for a started gather and frees the buffer's memory; returns the
  // bytes freed (0 when not held).
  int64_t release();
  // After the gathered parameters were overwritten alike on every rank:
  // copies rank `rank`'s chunk of them into the shard.
  void commit(int rank);

  bool empty() const { return params_.empty(); }
  bool held() const { return held_; }
  const std::vector<NamedTensor>& params() const { return params_; }
  const BucketLayout& layout() const { return layout_; }
  const at::Tensor& shard() const { return shard_; }

 private:
  std::vector<NamedTensor> params_;
  BucketLayout layout_;
  at::Tensor full_;    // [totalNumel]; the parameters are set onto its storage
  at::Tensor shard_;   // [shardNumel], this rank's chunk
  WorkHandle gather_;  // a started gather, not yet waited for
  bool held_ = false;  // `full_` holds memory (gathered or gathering)
};

// Parameters of several dtypes, a buffer per dtype (a bf16 base's
// projections beside its fp32 norms), in the order the dtypes first appear.
std::vector<ShardedBuffer> buffersByDtype(const std::vector<NamedTensor>& params, int shards);

}  // namespace strata::data_parallel

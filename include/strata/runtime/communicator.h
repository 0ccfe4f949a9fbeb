// A communicator: collectives and point-to-point messages within one group
// of ranks, behind a backend-neutral interface (Gloo and NCCL today, MPI next).
//
// Blocking: every `foo()` is `fooAsync()->wait()`. Every wait is bounded by the
// communicator's timeout and throws TimeoutError naming the operation, the
// group and (for point-to-point) the peer; a peer that died surfaces as
// PeerError with the same names. recvTensor throws ProtocolError for a
// malformed or absurd header before allocating anything.
//
// Ranks passed to and returned from a communicator are ranks within its group.
// Collectives must be called by every member in the same order.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace strata {

enum class ReduceOp { kSum, kAvg, kMax, kMin };

// A started operation.
class Work {
 public:
  virtual ~Work() = default;
  // Blocks until the operation completes, at most the communicator's timeout.
  // Throws TimeoutError or PeerError naming the operation and group.
  virtual void wait() = 0;
  // Never blocks: true once wait() would return (or throw) at once. A work
  // that cannot tell without blocking answers false until it is waited for
  // (the default), so callers use it only to let go of finished work early.
  virtual bool isCompleted() { return false; }
};
using WorkHandle = std::unique_ptr<Work>;

struct CommOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // recvTensor refuses headers announcing more elements than this (2^31 by
  // default: 8 GiB of float32), so a corrupt peer cannot make us allocate.
  int64_t maxRecvElements = int64_t{1} << 31;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // A readable name for messages, e.g. "tp[pp=0,dp=1]".
  virtual const std::string& name() const = 0;
  // Global rank of each member, indexed by group rank.
  virtual const std::vector<int>& globalRanks() const = 0;
  // "gloo", "nccl", or "gloo+shm" (Gloo with collectives over shared memory).
  virtual const char* backend() const = 0;
  virtual const CommOptions& options() const = 0;

  virtual WorkHandle allReduceAsync(at::Tensor& tensor, ReduceOp op = ReduceOp::kSum) = 0;
  virtual WorkHandle broadcastAsync(at::Tensor& tensor, int root) = 0;
  // Y = [X_0; X_1; ...; X_{n-1}]: output.size(0) == size() * input.size(0).
  virtual WorkHandle allGatherAsync(at::Tensor& output, const at::Tensor& input) = 0;
  // Y_r = reduce_i X_i[r*k : (r+1)*k] with k = output.size(0) and
  // input.size(0) == size() * k.
  virtual WorkHandle reduceScatterAsync(at::Tensor& output, const at::Tensor& input,
                                        ReduceOp op = ReduceOp::kSum) = 0;
  virtual WorkHandle sendAsync(const at::Tensor& tensor, int peer, int tag) = 0;
  virtual WorkHandle recvAsync(at::Tensor& tensor, int peer, int tag) = 0;
  // Blocks until every member arrives, at most the timeout.
  virtual void barrier() = 0;
  // All-to-all over rows (dim 0) with split sizes of each rank's own:
  // input's first inputSplits[0] rows go to rank 0, the next inputSplits[1]
  // to rank 1, ...; output receives outputSplits[0] rows from rank 0, then
  // outputSplits[1] from rank 1, ... Both contiguous, of one dtype and row
  // shape, with size(0) the sum of their splits; rank i's inputSplits[j] must
  // equal rank j's outputSplits[i] (exchangeCounts tells each rank what the
  // others will send). Every member calls it in the same order. The default
  // sends each piece as a point-to-point message (empty pieces are not
  // sent), each bounded by the timeout; throws Error for splits that do not
  // match the tensors, before any message.
  virtual WorkHandle allToAllAsync(at::Tensor& output, const at::Tensor& input,
                                   const std::vector<int64_t>& outputSplits,
                                   const std::vector<int64_t>& inputSplits);

  // A zeroed 1-D tensor of `numel` elements (dtype and device from `options`) that this group's
  // all-reduce and reduce-scatter can work on in place, without staging copies: on the
  // shared-memory transport every member's buffer lives in one segment, so
  // each member reduces its share of all of them directly. A contiguous view
  // of the buffer passed to a collective takes that path when every member
  // passes the same view (ProtocolError otherwise); any other tensor takes the
  // ordinary path. Transports without such memory return an ordinary tensor.
  //
  // Collective: every member calls it in the same order with the same
  // arguments; blocks like broadcast (bounded by the timeout). A buffer that
  // cannot be placed in shared memory (e.g. a full /dev/shm) falls back to
  // ordinary memory on every member together.
  virtual at::Tensor allocateCollectiveBuffer(int64_t numel, const at::TensorOptions& options);

  void allReduce(at::Tensor& tensor, ReduceOp op = ReduceOp::kSum);
  void broadcast(at::Tensor& tensor, int root);
  void allGather(at::Tensor& output, const at::Tensor& input);
  void reduceScatter(at::Tensor& output, const at::Tensor& input, ReduceOp op = ReduceOp::kSum);
  void send(const at::Tensor& tensor, int peer, int tag = 0);
  void recv(at::Tensor& tensor, int peer, int tag = 0);
  void allToAll(at::Tensor& output, const at::Tensor& input,
                const std::vector<int64_t>& outputSplits, const std::vector<int64_t>& inputSplits);

  // Counts before a variable all-to-all: row i of `counts` (int64 [size(), k])
  // goes to rank i; returns [size(), k], row j what rank j sent this rank.
  // Blocks like allToAll. Throws ProtocolError naming the sender when a
  // received count is negative, or when everything announced to this rank
  // adds up to more than options().maxRecvElements elements of `rowNumel`
  // each, before anything that large is allocated.
  at::Tensor exchangeCounts(const at::Tensor& counts, int64_t rowNumel);

  // Point-to-point for a tensor whose shape the receiver does not know: a
  // TensorHeader goes first, then the payload, both with `tag`.
  WorkHandle sendTensorAsync(const at::Tensor& tensor, int peer, int tag = 0);
  void sendTensor(const at::Tensor& tensor, int peer, int tag = 0);
  // Blocks for the header, validates it, allocates, then blocks for the payload.
  at::Tensor recvTensor(int peer, int tag = 0, at::Device device = at::kCPU);

  // "rank 3 (global 7) of tp[pp=1,dp=1]" — for messages.
  std::string describePeer(int peer) const;
};

}  // namespace strata

// Fully sharded data parallelism (ZeRO-3, FSDP): the parameters themselves
// are sharded over the replicas, not only their gradients and optimizer state.
//
// The model is cut into units (a layer, a block: whatever the caller lists).
// Each unit's parameters are laid out in one flat buffer padded to a multiple
// of R = comm.size() elements; rank r owns the contiguous chunk r of it, its
// shard, and between uses that is all the memory the unit's parameters hold:
// the parameters keep their shapes but their storage is released (reading
// them then is undefined; use fullParameters()).
//
// forward(u, body) all-gathers unit u (waiting for a gather already started
// by prefetch), runs body, and with reshardAfterForward releases the unit
// again. A hook on body's output re-gathers the unit when its gradient
// arrives in backward. When every parameter of the unit has accumulated its
// gradient, the unit's parameters are released and its gradients are
// reduce-scattered (averaged) into this rank's gradient shard, the full
// gradients dropped. At most `prefetch` reduce-scatters stay in flight (0:
// each completes before backward goes on).
// Under noSync() backward only accumulates the full gradients locally (units
// stay gathered between micro-batches unless reshardAfterForward); the next
// synchronised backward reduces the sum, once.
//
// Prefetch: entering unit u's forward starts the gathers of the `prefetch`
// units that followed it in the previous step's forward order; a unit's
// backward starts the gathers of the `prefetch` units before it in this step's
// forward order. So at most 1 + prefetch units are gathered ahead of their
// use, and communication overlaps compute.
//
// Collectives run in the order the model reaches units, so every rank must
// call forward() on the same units in the same order and reach the same
// parameters in backward (as FSDP requires). finishGradientSync() reduces the
// units whose gradients were not all reached (in unit order), then agrees over
// one small all-reduce on which parameters no rank used: with
// UnusedParameters::kError it throws Error naming them, on every rank alike;
// with kTreatAsZero they count as zero gradient, and isUsed() says false so an
// optimizer leaves them untouched, as one-process training would.
//
// Frozen parameters (requires_grad false: a base model under LoRA) may share
// a unit with trained ones. They are sharded and gathered with the unit, in
// flat buffers of their own, one per dtype (a bf16 base's projections beside
// its fp32 norms), but take no gradient,
// reduction or optimizer state: layout(), shard() and gradientShard() are the
// trained parameters' alone. A unit's frozen parameters are needed by its
// backward until it has also produced its input's gradient, which no
// gradient of the unit's own signals, so they are released when the gradient
// of the input handed to forward(unit, input, body) arrives, or else at the
// end of the backward pass (the same rule of reshardAfterForward and noSync as
// the trained ones).
//
// Construction is a collective: the structure is compared (ConfigError on
// mismatch, every rank alike), then unit by unit its parameters are given
// their values (options.initUnit, when set), broadcast from rank 0 or
// checked equal, and sharded. Every wait is bounded by the communicator's timeout
// (TimeoutError / PeerError). Hooks run on the autograd thread; the object is
// not meant to be used from two threads at once.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strata/data_parallel/bucket_layout.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/data_parallel/replica_sync.h"
#include "strata/runtime/communicator.h"

namespace strata::data_parallel {

// One unit of gathering: its parameters are gathered and released together.
struct ShardedUnit {
  std::string name;
  std::vector<NamedTensor> parameters;  // trained: each requires grad
  std::vector<NamedTensor> frozen;      // gathered only: none requires grad
};

struct FullyShardedOptions {
  // Release a unit's parameters after each forward (re-gathered in backward).
  // Off keeps them gathered from forward until the unit's synchronised
  // backward: less communication, more memory (torchtitan's choice under a
  // pipeline, whose micro-batches then share one gather).
  bool reshardAfterForward = true;
  // Units whose gathers may be started ahead of their use, and reduce-scatters
  // left in flight behind backward (0: none; each holds a unit's memory).
  int prefetch = 1;
  InitialSync initialSync = InitialSync::kBroadcast;
  UnusedParameters unusedParameters = UnusedParameters::kError;
  // Deferred initialisation: when set, the constructor calls it for each
  // unit in turn, just before broadcasting (or checking) and sharding that
  // unit, so that its parameters may arrive as placeholders of the right
  // shape (ModelFamily's shells) and be given their values one unit at a
  // time: the whole model is never held. It must leave every parameter of
  // the unit with its shape, a leaf that requires grad, or not for a frozen
  // one (Tensor::set_ onto a freshly built copy does). Runs on the constructing thread; what it
  // throws, the constructor throws.
  std::function<void(int unit, const ShardedUnit&)> initUnit;
};

class FullyShardedDataParallel {
 public:
  // Units must not share a parameter; trained parameters must be leaves of
  // one dtype that require grad, frozen ones leaves of any dtypes that do
  // not; all on one device.
  // The tensors must outlive this object.
  FullyShardedDataParallel(std::vector<ShardedUnit> units, Communicator& comm,
                           FullyShardedOptions options = {});
  ~FullyShardedDataParallel();
  FullyShardedDataParallel(const FullyShardedDataParallel&) = delete;
  FullyShardedDataParallel& operator=(const FullyShardedDataParallel&) = delete;

  // Runs `body` (which uses unit `unit`'s parameters) with the unit gathered.
  at::Tensor forward(int unit, const std::function<at::Tensor()>& body);
  // The same for a body of one input: `body` receives `input` passed through
  // a node whose backward says the unit's backward is over, so that its
  // frozen parameters are released then (see above).
  at::Tensor forward(int unit, const at::Tensor& input,
                     const std::function<at::Tensor(const at::Tensor&)>& body);
  // Waits for every reduction; see the contract above. Between backward and
  // the optimizer step.
  void finishGradientSync();
  // Releases the gradient shards' memory (the next reduce-scatter takes it
  // again, as FSDP's zero_grad(set_to_none)) and drops any full gradients.
  void zeroGrad();
  // Releases every gathered unit (after evaluation without backward, say).
  void reshard();
  // Collective: gathers every unit and keeps it gathered, so the parameters
  // can be read (a checkpoint save) or overwritten (a checkpoint load) whole.
  void gatherAll();
  // After the gathered parameters were overwritten alike on every rank:
  // copies this rank's chunk of every gathered unit into its shard and
  // releases the units. Does not communicate.
  void commitParameters();

  void setRequireSync(bool requireSync);
  bool requireSync() const;
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(FullyShardedDataParallel& owner);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    FullyShardedDataParallel& owner_;
    bool previous_;
  };
  NoSyncGuard noSync() { return NoSyncGuard(*this); }

  int numUnits() const;
  const ShardedUnit& unit(int unit) const;
  // Unit u's trained parameters' flat layout: one bucket, padded to a
  // multiple of comm.size() (no bucket when it has none); slot(i) places its
  // i-th parameter.
  const BucketLayout& layout(int unit) const;
  // This rank's trained parameters of unit u: [layout(u).shardNumel()].
  // Writing to it changes what the next gather returns.
  at::Tensor shard(int unit) const;
  // This rank's averaged gradient of unit u, [layout(u).shardNumel()], valid
  // from finishGradientSync() to zeroGrad(). Outside that window its storage
  // holds no memory (as a unit's parameters between uses); the tensor stays
  // the same object, so views taken of it once stay valid.
  at::Tensor gradientShard(int unit) const;
  // After finishGradientSync(): whether any rank's backward reached
  // parameter `param` of unit `unit` since the previous sync.
  bool isUsed(int unit, int param) const;
  // Collective: every unit's parameters, gathered and copied, in unit order
  // (each unit's trained parameters, then its frozen ones).
  std::vector<at::Tensor> fullParameters();
  Communicator& comm() const;
  const FullyShardedOptions& options() const;
  // Bytes of parameters gathered now and at most so far (since
  // construction): what ZeRO-3 adds to the shards.
  int64_t gatheredBytes() const;
  int64_t peakGatheredBytes() const;
  // Bytes this object holds at most at once (since construction): the
  // parameter shards, the gradient shards (each from its unit's reduce-scatter
  // to zeroGrad()), gathered parameters, full gradients on the parameters, and
  // reduce-scatter buffers (input and output) in flight.
  int64_t peakHeldBytes() const;
  // Seconds spent blocked waiting for gathers needed now (since
  // construction): the gather time prefetch did not hide.
  double gatherWaitSeconds() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::data_parallel

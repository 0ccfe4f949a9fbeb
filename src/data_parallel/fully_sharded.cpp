#include "strata/data_parallel/fully_sharded.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include <algorithm>
#include <deque>

#include "data_parallel/quoted_names.h"
#include "data_parallel/sharded_buffer.h"
#include "data_parallel/sharded_unit_checks.h"
#include "data_parallel/storage_release.h"
#include "data_parallel/sync_window.h"
#include "data_parallel/watch_input.h"
#include "strata/error.h"

namespace strata::data_parallel {
namespace {

int64_t bytesOf(const at::Tensor& t) { return t.numel() * static_cast<int64_t>(t.element_size()); }

}  // namespace

class FullyShardedDataParallel::Impl {
 public:
  Impl(std::vector<ShardedUnit> units, Communicator& comm, FullyShardedOptions options);
  ~Impl();

  at::Tensor forward(int unit, const at::Tensor& input,
                     const std::function<at::Tensor(const at::Tensor&)>& body);
  void finish();
  void zeroGrad();
  void reshard();
  void gatherAll();
  void commitParameters();
  std::vector<at::Tensor> fullParameters();

  struct Unit {
    ShardedUnit spec;
    ShardedBuffer trained;              // its trained parameters, and their own flat buffer
    std::vector<ShardedBuffer> frozen;  // its frozen ones, a buffer per dtype
    at::Tensor gradShard;               // [trained shardNumel], this rank's averaged gradient
    bool gradShardHeld = false;         // `gradShard` holds memory (reduced since zeroGrad())
    std::vector<char> arrived;          // per parameter: gradient accumulated since last completion
    std::vector<char> gradHeld;         // per parameter: .grad holds a full gradient
    std::vector<char> used;             // per parameter: gradient arrived since last sync
    std::vector<char> usedAnywhere;     // per parameter, after finish(): some rank used it
    bool reduced = false;               // reduce-scatter started in this sync window
  };

  struct Reduction {
    int unit;
    WorkHandle work;
    at::Tensor input;   // [paddedNumel], kept alive until the work is done
    at::Tensor output;  // [shardNumel]: the gradient shard itself, or a sum into it
    bool accumulate;    // add `output` to the gradient shard once done
  };

  std::vector<Unit> units_;
  Communicator& comm_;
  FullyShardedOptions options_;
  bool requireSync_ = true;
  std::vector<int> order_;      // units in the order forward() entered them, this step
  std::vector<int> lastOrder_;  // the same, previous step: the forward prefetch plan
  size_t backwardCursor_ = 0;   // position in order_ of the unit backward reached last
  std::deque<Reduction> reductions_;
  int64_t gatheredBytes_ = 0;
  int64_t peakGatheredBytes_ = 0;
  int64_t heldBytes_ = 0;  // shards, gathered, full gradients, reduce-scatter buffers in flight
  int64_t peakHeldBytes_ = 0;
  double gatherWaitSeconds_ = 0;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hookKeys_;
  std::vector<std::function<void()>> backwardOver_;  // per unit, what WatchInput calls

 private:
  void registerHooks();
  void startGather(ShardedBuffer& buffer);
  void waitGather(ShardedBuffer& buffer);
  void startGather(int unit);
  void ensureGathered(int unit);
  void release(ShardedBuffer& buffer);
  void release(int unit);
  void releaseFrozen(int unit);
  // The unit's buffers: trained first, then frozen.
  std::vector<ShardedBuffer*> buffersOf(Unit& unit);
  void onBackwardOver(int unit);
  void prefetch(const std::vector<int>& plan, size_t from, int direction);
  void onPreBackward(int unit);
  void onGradient(int unit, int param);
  void startReduction(int unit);
  void completeOldest();
  void addHeld(int64_t bytes);
  void dropFullGradient(int unit, size_t param);
  void agreeOnUsage();
  void resetWindow();
};

FullyShardedDataParallel::Impl::Impl(std::vector<ShardedUnit> units, Communicator& comm,
                                     FullyShardedOptions options)
    : comm_(comm), options_(options) {
  checkUnits(units, comm);
  if (options_.prefetch < 0) {
    throw ConfigError("fully sharded prefetch " + std::to_string(options_.prefetch) +
                      " is negative (0 turns prefetching off)");
  }
  std::vector<NamedTensor> all;
  for (ShardedUnit& spec : units) {
    Unit unit;
    unit.trained = ShardedBuffer(spec.parameters, comm.size());
    unit.frozen = buffersByDtype(spec.frozen, comm.size());
    all.insert(all.end(), spec.parameters.begin(), spec.parameters.end());
    all.insert(all.end(), spec.frozen.begin(), spec.frozen.end());
    unit.arrived.assign(spec.parameters.size(), 0);
    unit.gradHeld.assign(spec.parameters.size(), 0);
    unit.used.assign(spec.parameters.size(), 0);
    unit.usedAnywhere.assign(spec.parameters.size(), 1);
    unit.spec = std::move(spec);
    units_.push_back(std::move(unit));
  }
  for (int u = 0; u < static_cast<int>(units_.size()); ++u)
    backwardOver_.emplace_back([this, u] { onBackwardOver(u); });
  // Validation is over; from here on every rank communicates.
  checkSameStructure(all, comm_);
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    Unit& unit = units_[u];
    if (options_.initUnit) options_.initUnit(u, unit.spec);
    for (ShardedBuffer* buffer : buffersOf(unit)) {
      if (options_.initialSync == InitialSync::kBroadcast) {
        broadcastTensors(buffer->params(), comm_, 0);
      } else {
        checkTensorsEqual(buffer->params(), comm_);
      }
      addHeld(buffer->shardValues(comm_.rank()));
    }
    // Held only from the unit's reduce-scatter to zeroGrad().
    unit.gradShard = torch::empty_like(unit.trained.shard());
    releaseStorage(unit.gradShard);
  }
  registerHooks();
}

FullyShardedDataParallel::Impl::~Impl() {
  for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(hookKeys_[i]);
}

// As in DataParallel: a post hook on each parameter's AccumulateGrad node
// runs once .grad holds the accumulated gradient; we keep the nodes alive.
void FullyShardedDataParallel::Impl::registerHooks() {
  using torch::autograd::variable_list;
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    for (int i = 0; i < static_cast<int>(units_[u].trained.params().size()); ++i) {
      auto accumulator =
          torch::autograd::impl::grad_accumulator(units_[u].trained.params()[i].tensor);
      auto hook = std::make_unique<torch::autograd::utils::LambdaPostHook>(
          [this, u, i](const variable_list& outputs, const variable_list&) {
            onGradient(u, i);
            return outputs;
          });
      hookKeys_.push_back(accumulator->add_post_hook(std::move(hook)));
      accumulators_.push_back(std::move(accumulator));
    }
  }
}

void FullyShardedDataParallel::Impl::startGather(ShardedBuffer& buffer) {
  int64_t bytes = buffer.gather(comm_);
  gatheredBytes_ += bytes;
  peakGatheredBytes_ = std::max(peakGatheredBytes_, gatheredBytes_);
  addHeld(bytes);
}

void FullyShardedDataParallel::Impl::waitGather(ShardedBuffer& buffer) {
  gatherWaitSeconds_ += buffer.wait();
}

std::vector<ShardedBuffer*> FullyShardedDataParallel::Impl::buffersOf(Unit& unit) {
  std::vector<ShardedBuffer*> buffers = {&unit.trained};
  for (ShardedBuffer& frozen : unit.frozen) buffers.push_back(&frozen);
  return buffers;
}

void FullyShardedDataParallel::Impl::startGather(int u) {
  for (ShardedBuffer* buffer : buffersOf(units_[u])) startGather(*buffer);
}

void FullyShardedDataParallel::Impl::ensureGathered(int u) {
  startGather(u);
  for (ShardedBuffer* buffer : buffersOf(units_[u])) waitGather(*buffer);
}

void FullyShardedDataParallel::Impl::release(ShardedBuffer& buffer) {
  int64_t bytes = buffer.release();
  gatheredBytes_ -= bytes;
  addHeld(-bytes);
}

void FullyShardedDataParallel::Impl::release(int u) {
  for (ShardedBuffer* buffer : buffersOf(units_[u])) release(*buffer);
}

void FullyShardedDataParallel::Impl::releaseFrozen(int u) {
  for (ShardedBuffer& frozen : units_[u].frozen) release(frozen);
}

void FullyShardedDataParallel::Impl::addHeld(int64_t bytes) {
  heldBytes_ += bytes;
  peakHeldBytes_ = std::max(peakHeldBytes_, heldBytes_);
}

// Resets parameter i's full gradient of unit u (copied elsewhere or zeroed).
void FullyShardedDataParallel::Impl::dropFullGradient(int u, size_t i) {
  Unit& unit = units_[u];
  at::Tensor param = unit.trained.params()[i].tensor;
  param.mutable_grad().reset();
  if (unit.gradHeld[i]) addHeld(-bytesOf(param));
  unit.gradHeld[i] = 0;
}

// Starts the gathers of up to `prefetch` units of `plan` from position
// `from` on, walking in `direction` (+1 forward, -1 backward).
void FullyShardedDataParallel::Impl::prefetch(const std::vector<int>& plan, size_t from,
                                              int direction) {
  auto pos = static_cast<int64_t>(from);
  for (int n = 0; n < options_.prefetch; ++n, pos += direction) {
    if (pos < 0 || pos >= static_cast<int64_t>(plan.size())) return;
    startGather(plan[static_cast<size_t>(pos)]);
  }
}

at::Tensor FullyShardedDataParallel::Impl::forward(
    int u, const at::Tensor& input, const std::function<at::Tensor(const at::Tensor&)>& body) {
  if (u < 0 || u >= static_cast<int>(units_.size())) {
    throw Error("fully sharded forward of unit " + std::to_string(u) + ", but there are " +
                std::to_string(units_.size()) + " units");
  }
  ensureGathered(u);
  size_t position = order_.size();
  order_.push_back(u);
  backwardCursor_ = order_.size();
  // The previous step's order says what comes next, if this step follows it.
  if (position < lastOrder_.size() && lastOrder_[position] == u) {
    prefetch(lastOrder_, position + 1, +1);
  }
  bool watched = !units_[u].frozen.empty() && input.defined() && input.requires_grad() &&
                 torch::GradMode::is_enabled();
  at::Tensor output = body(watched ? WatchInput::apply(input, &backwardOver_[u]) : input);
  if (output.requires_grad()) {
    output.register_hook([this, u](const at::Tensor&) { onPreBackward(u); });
  }
  if (options_.reshardAfterForward) release(u);
  return output;
}

// Unit u's output gradient arrived: its backward needs the parameters, and
// the units before it in forward order come next.
void FullyShardedDataParallel::Impl::onPreBackward(int u) {
  ensureGathered(u);
  // Where no WatchInput tells the end of the unit's backward (no input, or
  // this pass does not reach it), the end of the pass does.
  if (!units_[u].frozen.empty()) {
    torch::autograd::Engine::get_default_engine().queue_callback(backwardOver_[u]);
  }
  for (size_t pos = backwardCursor_; pos-- > 0;) {
    if (order_[pos] != u) continue;
    backwardCursor_ = pos;
    if (pos > 0) prefetch(order_, pos - 1, -1);
    return;
  }
}

// The unit's backward in this pass is over: its frozen parameters go by the
// rule of its trained ones (those go once their gradients have all arrived,
// which needs no node run after them).
void FullyShardedDataParallel::Impl::onBackwardOver(int u) {
  if (requireSync_ || options_.reshardAfterForward) releaseFrozen(u);
}

void FullyShardedDataParallel::Impl::onGradient(int u, int i) {
  Unit& unit = units_[u];
  unit.arrived[i] = 1;
  unit.used[i] = 1;
  if (!unit.gradHeld[i]) {
    unit.gradHeld[i] = 1;
    addHeld(bytesOf(unit.trained.params()[i].tensor));
  }
  if (std::find(unit.arrived.begin(), unit.arrived.end(), 0) != unit.arrived.end()) return;
  // Every trained parameter has its gradient: they are no longer needed, so
  // they go before the reduce-scatter's buffer comes.
  std::fill(unit.arrived.begin(), unit.arrived.end(), 0);
  if (requireSync_ || options_.reshardAfterForward) release(unit.trained);
  if (requireSync_) startReduction(u);
}

// Full gradients -> padded flat buffer (missing ones zero) -> this rank's
// averaged chunk. The full gradients are dropped. At most `prefetch`
// reductions stay in flight, each holding its buffer: the oldest completes
// before a new buffer is taken, so prefetch 0 reduces synchronously.
void FullyShardedDataParallel::Impl::startReduction(int u) {
  torch::NoGradGuard noGrad;
  auto inFlight = static_cast<size_t>(options_.prefetch);
  while (!reductions_.empty() && reductions_.size() >= inFlight) completeOldest();
  Unit& unit = units_[u];
  unit.reduced = true;
  if (unit.trained.empty()) return;
  at::Tensor flat =
      torch::zeros({unit.trained.layout().totalNumel()}, unit.trained.shard().options());
  addHeld(bytesOf(flat));
  for (size_t i = 0; i < unit.trained.params().size(); ++i) {
    at::Tensor param = unit.trained.params()[i].tensor;
    const at::Tensor& grad = param.grad();
    if (!grad.defined()) continue;
    const ParamSlot& slot = unit.trained.layout().slot(static_cast<int>(i));
    flat.narrow(0, slot.offset, slot.numel).view(param.sizes()).copy_(grad);
    dropFullGradient(u, i);
  }
  // The first reduction since zeroGrad() writes the gradient shard; a later
  // one (no zeroGrad() between two syncs) sums into it.
  bool accumulate = unit.gradShardHeld;
  at::Tensor output = accumulate ? torch::empty_like(unit.trained.shard()) : unit.gradShard;
  if (!accumulate) {
    restoreStorage(unit.gradShard, unit.trained.shard().nbytes());
    unit.gradShardHeld = true;
  }
  addHeld(bytesOf(output));
  reductions_.push_back(
      {u, comm_.reduceScatterAsync(output, flat, ReduceOp::kAvg), flat, output, accumulate});
  if (reductions_.size() > inFlight) completeOldest();
}

void FullyShardedDataParallel::Impl::completeOldest() {
  Reduction reduction = std::move(reductions_.front());
  reductions_.pop_front();
  reduction.work->wait();
  addHeld(-bytesOf(reduction.input));
  if (!reduction.accumulate) return;
  units_[reduction.unit].gradShard.add_(reduction.output);
  addHeld(-bytesOf(reduction.output));
}

void FullyShardedDataParallel::Impl::finish() {
  requireSyncOn(requireSync_, comm_.name());
  ResetWindowOnExit reset([this] { resetWindow(); });
  // Units whose backward did not reach every parameter, in unit order, which
  // is the same on every rank.
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    if (!units_[u].reduced) startReduction(u);
  }
  while (!reductions_.empty()) completeOldest();
  reshard();
  agreeOnUsage();
}

// One all-reduce of usage flags: every rank learns which parameters no rank
// used and decides alike.
void FullyShardedDataParallel::Impl::agreeOnUsage() {
  std::vector<float> flags;
  for (const Unit& unit : units_) flags.insert(flags.end(), unit.used.begin(), unit.used.end());
  at::Tensor usage = torch::tensor(flags);  // [total parameters]
  comm_.allReduce(usage, ReduceOp::kMax);
  const float* users = usage.data_ptr<float>();
  std::vector<std::string> unused;
  size_t index = 0;
  for (Unit& unit : units_) {
    for (size_t i = 0; i < unit.used.size(); ++i, ++index) {
      unit.usedAnywhere[i] = users[index] > 0;
      if (!unit.usedAnywhere[i]) unused.push_back(unit.trained.params()[i].name);
    }
  }
  if (!unused.empty() && options_.unusedParameters == UnusedParameters::kError) {
    throw Error(std::to_string(unused.size()) +
                " parameters received no gradient on any rank since the last sync on group " +
                comm_.name() + ": " + quotedNames(unused) +
                " (was backward run? is every layer used in forward? set "
                "UnusedParameters::kTreatAsZero to allow it)");
  }
}

void FullyShardedDataParallel::Impl::resetWindow() {
  for (Unit& unit : units_) {
    std::fill(unit.arrived.begin(), unit.arrived.end(), 0);
    std::fill(unit.used.begin(), unit.used.end(), 0);
    unit.reduced = false;
  }
  lastOrder_ = std::move(order_);
  order_.clear();
  backwardCursor_ = 0;
}

void FullyShardedDataParallel::Impl::zeroGrad() {
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    // Released, not zeroed, as FSDP's zero_grad(set_to_none): a gradient shard
    // needs no memory between the optimizer step and its next reduce-scatter.
    Unit& unit = units_[u];
    if (unit.gradShardHeld) {
      releaseStorage(unit.gradShard);
      unit.gradShardHeld = false;
      addHeld(-bytesOf(unit.gradShard));
    }
    for (size_t i = 0; i < units_[u].trained.params().size(); ++i) dropFullGradient(u, i);
  }
}

void FullyShardedDataParallel::Impl::reshard() {
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) release(u);
}

void FullyShardedDataParallel::Impl::gatherAll() {
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) ensureGathered(u);
}

void FullyShardedDataParallel::Impl::commitParameters() {
  torch::NoGradGuard noGrad;
  for (Unit& unit : units_) {
    for (ShardedBuffer* buffer : buffersOf(unit)) {
      if (!buffer->held()) continue;
      waitGather(*buffer);
      buffer->commit(comm_.rank());
      release(*buffer);
    }
  }
}

std::vector<at::Tensor> FullyShardedDataParallel::Impl::fullParameters() {
  std::vector<at::Tensor> copies;
  for (Unit& unit : units_) {
    std::vector<ShardedBuffer*> buffers = buffersOf(unit);
    std::vector<char> wasHeld;
    for (ShardedBuffer* buffer : buffers) {
      wasHeld.push_back(buffer->held());
      startGather(*buffer);
      waitGather(*buffer);
    }
    // In the unit's order, not the buffers': its frozen ones may be in several.
    for (const NamedTensor& p : unit.spec.parameters) copies.push_back(p.tensor.detach().clone());
    for (const NamedTensor& p : unit.spec.frozen) copies.push_back(p.tensor.detach().clone());
    for (size_t b = 0; b < buffers.size(); ++b)
      if (!wasHeld[b]) release(*buffers[b]);
  }
  return copies;
}

FullyShardedDataParallel::FullyShardedDataParallel(std::vector<ShardedUnit> units,
                                                   Communicator& comm, FullyShardedOptions options)
    : impl_(std::make_unique<Impl>(std::move(units), comm, options)) {}

FullyShardedDataParallel::~FullyShardedDataParallel() = default;

at::Tensor FullyShardedDataParallel::forward(int unit, const std::function<at::Tensor()>& body) {
  return impl_->forward(unit, at::Tensor(), [&body](const at::Tensor&) { return body(); });
}
at::Tensor FullyShardedDataParallel::forward(
    int unit, const at::Tensor& input, const std::function<at::Tensor(const at::Tensor&)>& body) {
  return impl_->forward(unit, input, body);
}
void FullyShardedDataParallel::finishGradientSync() { impl_->finish(); }
void FullyShardedDataParallel::zeroGrad() { impl_->zeroGrad(); }
void FullyShardedDataParallel::reshard() { impl_->reshard(); }
void FullyShardedDataParallel::gatherAll() { impl_->gatherAll(); }
void FullyShardedDataParallel::commitParameters() { impl_->commitParameters(); }
void FullyShardedDataParallel::setRequireSync(bool requireSync) {
  impl_->requireSync_ = requireSync;
}
bool FullyShardedDataParallel::requireSync() const { return impl_->requireSync_; }
int FullyShardedDataParallel::numUnits() const { return static_cast<int>(impl_->units_.size()); }
const ShardedUnit& FullyShardedDataParallel::unit(int unit) const {
  return impl_->units_.at(unit).spec;
}
const BucketLayout& FullyShardedDataParallel::layout(int unit) const {
  return impl_->units_.at(unit).trained.layout();
}
at::Tensor FullyShardedDataParallel::shard(int unit) const {
  return impl_->units_.at(unit).trained.shard();
}
at::Tensor FullyShardedDataParallel::gradientShard(int unit) const {
  return impl_->units_.at(unit).gradShard;
}
bool FullyShardedDataParallel::isUsed(int unit, int param) const {
  return impl_->units_.at(unit).usedAnywhere.at(param) != 0;
}
std::vector<at::Tensor> FullyShardedDataParallel::fullParameters() {
  return impl_->fullParameters();
}
Communicator& FullyShardedDataParallel::comm() const { return impl_->comm_; }
const FullyShardedOptions& FullyShardedDataParallel::options() const { return impl_->options_; }
int64_t FullyShardedDataParallel::gatheredBytes() const { return impl_->gatheredBytes_; }
int64_t FullyShardedDataParallel::peakGatheredBytes() const { return impl_->peakGatheredBytes_; }
int64_t FullyShardedDataParallel::peakHeldBytes() const { return impl_->peakHeldBytes_; }
double FullyShardedDataParallel::gatherWaitSeconds() const { return impl_->gatherWaitSeconds_; }

FullyShardedDataParallel::NoSyncGuard::NoSyncGuard(FullyShardedDataParallel& owner)
    : owner_(owner), previous_(owner.requireSync()) {
  owner_.setRequireSync(false);
}

FullyShardedDataParallel::NoSyncGuard::~NoSyncGuard() { owner_.setRequireSync(previous_); }

}  // namespace strata::data_parallel

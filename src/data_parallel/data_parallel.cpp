#include "strata/data_parallel/data_parallel.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include <mutex>
#include <unordered_set>

#include "data_parallel/quoted_names.h"
#include "data_parallel/sync_window.h"
#include "strata/error.h"

namespace strata::data_parallel {
namespace {

// Parameters that take part: those that require grad, each tensor once
// (tied weights appear under several names).
std::vector<NamedTensor> trainable(std::vector<NamedTensor> all) {
  std::vector<NamedTensor> kept;
  std::unordered_set<const void*> seen;
  for (NamedTensor& t : all) {
    if (!t.tensor.requires_grad()) continue;
    if (seen.insert(t.tensor.unsafeGetTensorImpl()).second) kept.push_back(std::move(t));
  }
  return kept;
}

void checkParameters(const std::vector<NamedTensor>& params, const Communicator& comm) {
  if (params.empty()) {
    throw ConfigError("data parallelism on group " + comm.name() +
                      ": no parameter requires a gradient");
  }
  for (const NamedTensor& p : params) {
    if (p.tensor.scalar_type() != params[0].tensor.scalar_type()) {
      throw ConfigError("data parallelism needs one dtype for all parameters: '" + params[0].name +
                        "' is " + c10::toString(params[0].tensor.scalar_type()) + " but '" +
                        p.name + "' is " + c10::toString(p.tensor.scalar_type()));
    }
    if (!p.tensor.is_leaf()) {
      throw ConfigError("parameter '" + p.name + "' is not a leaf tensor");
    }
  }
}

BucketLayout planLayout(const std::vector<NamedTensor>& params, const DataParallelOptions& options,
                        const Communicator& comm) {
  std::vector<int64_t> numels;
  for (const NamedTensor& p : params) numels.push_back(p.tensor.numel());
  return BucketLayout::plan(numels, params[0].tensor.element_size(), options.buckets, comm.size());
}

// A tensor over `flat`'s memory from `offset` on, shaped `sizes`, that autograd
// does not record as a view: LibTorch's Optimizer::zero_grad() calls detach_()
// on every .grad, which autograd refuses for views.
at::Tensor untrackedAlias(const at::Tensor& flat, int64_t offset, at::IntArrayRef sizes) {
  at::Tensor shaped = flat.narrow(0, offset, c10::multiply_integers(sizes)).view(sizes);
  return at::empty({0}, flat.options())
      .set_(flat.storage(), shaped.storage_offset(), shaped.sizes(), shaped.strides());
}

}  // namespace

class DataParallel::Impl {
 public:
  Impl(std::vector<NamedTensor> params, const std::vector<NamedTensor>& buffers, Communicator& comm,
       DataParallelOptions options)
      : comm_(comm), options_(options) {
    std::vector<NamedTensor> kept = trainable(std::move(params));
    checkParameters(kept, comm);
    layout_ = planLayout(kept, options_, comm);
    // Validation is over; from here on every rank communicates.
    synchroniseReplicas(kept, buffers);
    for (NamedTensor& p : kept) {
      names_.push_back(p.name);
      params_.push_back(p.tensor);
    }
    allocateBuffers();
    registerHooks();
    resetWindow();
  }

  ~Impl() {
    for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(hookKeys_[i]);
  }

  void finish();
  void zeroGrad() {
    std::lock_guard<std::mutex> lock(mutex_);
    flatGrad_.zero_();
    for (size_t i = 0; i < params_.size(); ++i) params_[i].mutable_grad() = gradViews_[i];
  }
  void setRequireSync(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    requireSync_ = on;
  }
  bool requireSync() const { return requireSync_; }
  int startedBuckets() const { return nextBucket_; }
  const BucketLayout& layout() const { return layout_; }
  const std::vector<at::Tensor>& parameters() const { return params_; }
  Communicator& comm() const { return comm_; }
  const DataParallelOptions& options() const { return options_; }
  at::Tensor ownedGradient(int bucket) const {
    if (options_.reduction == GradientReduction::kReduceScatter) return ownedViews_[bucket];
    return flatGrad_.narrow(0, layout_.chunkOffset(bucket, comm_.rank()),
                            layout_.chunkNumel(bucket));
  }

 private:
  void synchroniseReplicas(const std::vector<NamedTensor>& params,
                           const std::vector<NamedTensor>& buffers);
  void allocateBuffers();
  void registerHooks();
  void onGradientReady(int param);
  void adoptGradient(int param);
  void markReady(int param);
  void launchReadyBuckets();
  void resolveMissingGradients();
  void waitAll();
  void bindGradients(const at::Tensor& globalUsage);
  void resetWindow();

  Communicator& comm_;
  DataParallelOptions options_;
  BucketLayout layout_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  at::Tensor flatGrad_;                  // [layout.totalNumel()]
  std::vector<at::Tensor> bucketViews_;  // bucket b: [paddedNumel_b] in flatGrad_
  std::vector<at::Tensor> gradViews_;    // param i: its shape, in flatGrad_
  std::vector<at::Tensor> ownedViews_;   // reduce-scatter: bucket b's chunk [chunkNumel_b]
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hookKeys_;

  // State of the current sync window (since the last finishGradientSync).
  std::vector<int> pending_;         // per bucket: parameters still without gradient
  std::vector<char> readyThisSync_;  // per param: gradient arrived in a synchronised backward
  std::vector<char> usedSinceSync_;  // per param: gradient arrived in any backward
  std::vector<WorkHandle> works_;    // started reductions, in bucket order
  at::Tensor usage_;                 // kTreatAsZero: replicas that used each param
  WorkHandle usageWork_;
  int nextBucket_ = 0;
  bool requireSync_ = true;
  std::mutex mutex_;
};

void DataParallel::Impl::synchroniseReplicas(const std::vector<NamedTensor>& params,
                                             const std::vector<NamedTensor>& buffers) {
  std::vector<NamedTensor> all = params;
  all.insert(all.end(), buffers.begin(), buffers.end());
  checkSameStructure(all, comm_);
  if (options_.initialSync == InitialSync::kBroadcast) {
    broadcastTensors(all, comm_, 0);
  } else {
    checkTensorsEqual(all, comm_);
  }
}

void DataParallel::Impl::allocateBuffers() {
  at::TensorOptions type = params_[0].options().requires_grad(false);
  // Where the transport allows, peers reduce this buffer in place.
  flatGrad_ = comm_.allocateCollectiveBuffer(layout_.totalNumel(), type);
  for (const Bucket& b : layout_.buckets()) {
    bucketViews_.push_back(flatGrad_.narrow(0, b.offset, b.paddedNumel));
  }
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamSlot& slot = layout_.slot(static_cast<int>(i));
    gradViews_.push_back(untrackedAlias(flatGrad_, slot.offset, params_[i].sizes()));
    if (params_[i].grad().defined()) gradViews_[i].copy_(params_[i].grad());
    params_[i].mutable_grad() = gradViews_[i];
  }
  if (options_.reduction == GradientReduction::kReduceScatter) {
    at::Tensor owned = torch::zeros({layout_.shardNumel()}, type);
    int64_t offset = 0;
    for (int b = 0; b < static_cast<int>(layout_.buckets().size()); ++b) {
      ownedViews_.push_back(owned.narrow(0, offset, layout_.chunkNumel(b)));
      offset += layout_.chunkNumel(b);
    }
  }
}

// The hook goes after the parameter's AccumulateGrad node, not on the tensor:
// in LibTorch a tensor hook on a leaf runs *before* accumulation and sees
// only the incoming gradient, while a post hook on the accumulator runs once
// .grad (our bucket view) holds the accumulated value. The parameter keeps only
// a weak reference to its accumulator, so we hold it: otherwise the next
// forward would build a fresh one without our hook.
void DataParallel::Impl::registerHooks() {
  using torch::autograd::variable_list;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params_[i]);
    int param = static_cast<int>(i);
    auto hook = std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, param](const variable_list& outputs, const variable_list&) {
          onGradientReady(param);
          return outputs;
        });
    hookKeys_.push_back(accumulator->add_post_hook(std::move(hook)));
    accumulators_.push_back(std::move(accumulator));
  }
}

void DataParallel::Impl::onGradientReady(int param) {
  std::lock_guard<std::mutex> lock(mutex_);
  adoptGradient(param);
  usedSinceSync_[param] = 1;
  if (!requireSync_) return;
  if (readyThisSync_[param]) {
    throw Error("parameter '" + names_[param] + "' received a second gradient in one " +
                "synchronised step on group " + comm_.name() +
                "; call finishGradientSync() after each synchronised backward and run the other " +
                "micro-batches under noSync()");
  }
  markReady(param);
  launchReadyBuckets();
}

// Autograd replaces .grad instead of accumulating into it when .grad was
// reset (zero_grad(set_to_none)) or the graph is differentiated twice; then
// the fresh gradient is copied into the bucket and the view bound again.
void DataParallel::Impl::adoptGradient(int param) {
  at::Tensor& grad = params_[param].mutable_grad();
  const at::Tensor& view = gradViews_[param];
  if (grad.is_same(view)) return;
  bool aliasesView = grad.defined() && grad.data_ptr() == view.data_ptr() &&
                     grad.sizes() == view.sizes() && grad.strides() == view.strides();
  // Module::zero_grad() rebinds .grad to a detached alias of the same memory:
  // nothing to copy then.
  if (!aliasesView) {
    torch::NoGradGuard noGrad;
    if (grad.defined()) {
      gradViews_[param].copy_(grad);
    } else {
      gradViews_[param].zero_();
    }
  }
  grad = view;
}

void DataParallel::Impl::markReady(int param) {
  readyThisSync_[param] = 1;
  --pending_[layout_.slot(param).bucket];
}

void DataParallel::Impl::launchReadyBuckets() {
  int numBuckets = static_cast<int>(layout_.buckets().size());
  for (; nextBucket_ < numBuckets && pending_[nextBucket_] == 0; ++nextBucket_) {
    int b = nextBucket_;
    if (options_.reduction == GradientReduction::kAllReduce) {
      works_.push_back(comm_.allReduceAsync(bucketViews_[b], ReduceOp::kAvg));
    } else {
      works_.push_back(comm_.reduceScatterAsync(ownedViews_[b], bucketViews_[b], ReduceOp::kAvg));
    }
  }
}

void DataParallel::Impl::resolveMissingGradients() {
  std::vector<std::string> unused;
  for (int i = 0; i < static_cast<int>(params_.size()); ++i) {
    if (readyThisSync_[i]) continue;
    if (usedSinceSync_[i]) {
      markReady(i);  // accumulated in an earlier micro-batch of this window
    } else if (options_.unusedParameters == UnusedParameters::kTreatAsZero) {
      adoptGradient(i);
      gradViews_[i].zero_();
      markReady(i);
    } else {
      unused.push_back(names_[i]);
    }
  }
  if (!unused.empty()) {
    waitAll();  // the reductions already started are matched on every replica
    throw Error(std::to_string(unused.size()) + " of " + std::to_string(params_.size()) +
                " parameters received no gradient since the last sync on group " + comm_.name() +
                ": " + quotedNames(unused) +
                " (was backward run? is every layer used in forward? set "
                "UnusedParameters::kTreatAsZero to allow it)");
  }
  launchReadyBuckets();
  if (options_.unusedParameters == UnusedParameters::kTreatAsZero) {
    usage_ = torch::tensor(std::vector<float>(usedSinceSync_.begin(), usedSinceSync_.end()));
    usageWork_ = comm_.allReduceAsync(usage_, ReduceOp::kSum);
  }
}

void DataParallel::Impl::waitAll() {
  for (WorkHandle& work : works_) work->wait();
  if (usageWork_) usageWork_->wait();
}

void DataParallel::Impl::bindGradients(const at::Tensor& globalUsage) {
  std::vector<float> users(params_.size(), 1.0f);
  if (globalUsage.defined()) {
    users.assign(globalUsage.data_ptr<float>(), globalUsage.data_ptr<float>() + params_.size());
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    bool nobodyUsed = users[i] == 0;
    if (nobodyUsed) {
      params_[i].mutable_grad().reset();  // as in one-process training
    } else {
      params_[i].mutable_grad() = gradViews_[i];
    }
  }
}

void DataParallel::Impl::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  requireSyncOn(requireSync_, comm_.name());
  ResetWindowOnExit reset([this] { resetWindow(); });
  resolveMissingGradients();
  waitAll();
  bindGradients(usage_);
}

void DataParallel::Impl::resetWindow() {
  pending_.clear();
  for (const Bucket& b : layout_.buckets()) pending_.push_back(static_cast<int>(b.params.size()));
  readyThisSync_.assign(params_.size(), 0);
  usedSinceSync_.assign(params_.size(), 0);
  works_.clear();
  usage_ = at::Tensor();
  usageWork_.reset();
  nextBucket_ = 0;
}

namespace {

std::vector<NamedTensor> named(const torch::OrderedDict<std::string, at::Tensor>& dict) {
  std::vector<NamedTensor> list;
  for (const auto& item : dict) list.push_back({item.key(), item.value()});
  return list;
}

}  // namespace

DataParallel::DataParallel(torch::nn::Module& module, Communicator& comm,
                           DataParallelOptions options)
    : impl_(std::make_unique<Impl>(named(module.named_parameters()), named(module.named_buffers()),
                                   comm, options)) {}

DataParallel::DataParallel(std::vector<NamedTensor> parameters, Communicator& comm,
                           DataParallelOptions options)
    : impl_(std::make_unique<Impl>(std::move(parameters), std::vector<NamedTensor>{}, comm,
                                   options)) {}

DataParallel::~DataParallel() = default;

void DataParallel::finishGradientSync() { impl_->finish(); }
void DataParallel::zeroGrad() { impl_->zeroGrad(); }
void DataParallel::setRequireSync(bool requireSync) { impl_->setRequireSync(requireSync); }
bool DataParallel::requireSync() const { return impl_->requireSync(); }
const BucketLayout& DataParallel::layout() const { return impl_->layout(); }
const std::vector<at::Tensor>& DataParallel::parameters() const { return impl_->parameters(); }
Communicator& DataParallel::comm() const { return impl_->comm(); }
const DataParallelOptions& DataParallel::options() const { return impl_->options(); }
int DataParallel::startedBuckets() const { return impl_->startedBuckets(); }
at::Tensor DataParallel::ownedGradient(int bucket) const { return impl_->ownedGradient(bucket); }

DataParallel::NoSyncGuard::NoSyncGuard(DataParallel& owner)
    : owner_(owner), previous_(owner.requireSync()) {
  owner_.setRequireSync(false);
}

DataParallel::NoSyncGuard::~NoSyncGuard() { owner_.setRequireSync(previous_); }

}  // namespace strata::data_parallel

#include "c10d_communicator.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "collective_checks.h"
#include "send_watcher.h"
#include "strata/error.h"
#include "strata/runtime/timeouts.h"
#include "torch_compat.h"

namespace strata {
namespace {

bool looksLikeTimeout(const std::string& message) {
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  return lower.find("timed out") != std::string::npos || lower.find("timeout") != std::string::npos;
}

// Rethrows a backend failure as TimeoutError or PeerError whose message names
// the operation, where it ran, and the deadline.
[[noreturn]] void rethrowNamed(const std::exception& cause, const std::string& what,
                               std::chrono::milliseconds timeout) {
  std::string detail = cause.what();
  if (auto newline = detail.find('\n'); newline != std::string::npos) detail.resize(newline);
  if (looksLikeTimeout(detail)) {
    throw TimeoutError(what + " timed out after " + describeDuration(timeout) +
                       " (a peer stalled or never arrived; raise --timeout / STRATA_TIMEOUT if "
                       "the work is legitimately slow): " +
                       detail);
  }
  throw PeerError(what + " failed (a peer exited or closed its connection): " + detail);
}

// How wait() bounds an operation. Gloo runs it on the host: wait blocks
// there, at most the timeout. NCCL runs it on its own CUDA stream, which
// ProcessGroupNCCL orders after the caller's compute stream with an event;
// wait() then only makes the compute stream wait for it (the host goes on, so
// communication overlaps compute), and NCCL's watchdog enforces the timeout
// given at creation, taking the process down with the operation and group
// named in its message.
enum class WaitMode { kHostBounded, kStreamOrdered };

// A Gloo send is waited for by its communicator's SendWatcher: `watched` is
// set and `work` is not.
class C10dWork : public Work {
 public:
  C10dWork(c10::intrusive_ptr<c10d::Work> work, std::string what, std::chrono::milliseconds timeout,
           WaitMode mode, std::vector<at::Tensor> keepAlive, std::function<void()> onDone,
           std::shared_ptr<SendWatcher::Watched> watched = nullptr)
      : work_(std::move(work)),
        what_(std::move(what)),
        timeout_(timeout),
        mode_(mode),
        keepAlive_(std::move(keepAlive)),
        onDone_(std::move(onDone)),
        watched_(std::move(watched)) {}

  void wait() override {
    if (done_) return;
    try {
      if (watched_) {
        watched_->wait();
      } else if (mode_ == WaitMode::kStreamOrdered) {
        work_->wait();
      } else {
        work_->wait(timeout_);
      }
    } catch (const std::exception& e) {
      rethrowNamed(e, what_, timeout_);
    }
    done_ = true;
    if (onDone_) onDone_();
  }

  bool isCompleted() override {
    return done_ || (watched_ ? watched_->done() : work_->isCompleted());
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::string what_;
  std::chrono::milliseconds timeout_;
  WaitMode mode_;
  std::vector<at::Tensor> keepAlive_;  // buffers the backend reads or writes until done
  std::function<void()> onDone_;
  std::shared_ptr<SendWatcher::Watched> watched_;
  bool done_ = false;
};

c10d::ReduceOp toC10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return c10d::ReduceOp::MAX;
    case ReduceOp::kMin:
      return c10d::ReduceOp::MIN;
    case ReduceOp::kSum:
    case ReduceOp::kAvg:  // Gloo has no average: sum, then divide on completion
      return c10d::ReduceOp::SUM;
  }
  return c10d::ReduceOp::SUM;
}

class C10dCommunicator : public Communicator {
 public:
  C10dCommunicator(GroupSpec spec, c10::intrusive_ptr<c10d::Backend> backend)
      : spec_(std::move(spec)), backend_(std::move(backend)) {}

  int rank() const override { return spec_.rank; }
  int size() const override { return static_cast<int>(spec_.globalRanks.size()); }
  const std::string& name() const override { return spec_.name; }
  const std::vector<int>& globalRanks() const override { return spec_.globalRanks; }
  const char* backend() const override { return spec_.backend == "nccl" ? "nccl" : "gloo"; }
  const CommOptions& options() const override { return spec_.options; }

  WorkHandle allReduceAsync(at::Tensor& tensor, ReduceOp op) override {
    requireContiguous(tensor, "all_reduce", spec_.name);
    checkAverageable(tensor, op, "all_reduce", spec_.name);
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions opts;
    opts.reduceOp = toC10d(op);
    opts.timeout = spec_.options.timeout;
    return wrap(backend_->allreduce(tensors, opts), "all_reduce", tensors, averageIf(op, tensor));
  }

  WorkHandle broadcastAsync(at::Tensor& tensor, int root) override {
    requireContiguous(tensor, "broadcast", spec_.name);
    checkPeer(root, "broadcast root");
    std::vector<at::Tensor> tensors{tensor};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    opts.timeout = spec_.options.timeout;
    return wrap(backend_->broadcast(tensors, opts), "broadcast from " + describePeer(root),
                tensors);
  }

  WorkHandle allGatherAsync(at::Tensor& output, const at::Tensor& input) override {
    requireContiguous(output, "all_gather", spec_.name);
    checkStacked(output, input, "all_gather", "output", "input", spec_.name, size());
    at::Tensor source = input.contiguous();
    std::vector<at::Tensor> chunks = output.chunk(size(), 0);
    std::vector<std::vector<at::Tensor>> outputs{chunks};
    std::vector<at::Tensor> inputs{source};
    c10d::AllgatherOptions opts;
    opts.timeout = spec_.options.timeout;
    std::vector<at::Tensor> keep = chunks;
    keep.push_back(source);
    return wrap(backend_->allgather(outputs, inputs, opts), "all_gather", keep);
  }

  WorkHandle reduceScatterAsync(at::Tensor& output, const at::Tensor& input, ReduceOp op) override {
    requireContiguous(output, "reduce_scatter", spec_.name);
    checkStacked(input, output, "reduce_scatter", "input", "output", spec_.name, size());
    checkAverageable(output, op, "reduce_scatter", spec_.name);
    // Gloo has no reduce-scatter: an all-to-all hands every rank the k rows
    // each peer holds for it, which it then reduces locally. Each rank sends
    // (n-1)/n of its input, the same volume as a ring reduce-scatter.
    at::Tensor source = input.contiguous();
    at::Tensor received = at::empty_like(source);
    std::vector<int64_t> noSplits;
    c10d::AllToAllOptions opts;
    opts.timeout = spec_.options.timeout;
    int n = size();
    auto reduceLocally = [output, received, n, op]() mutable {
      std::vector<int64_t> stacked{n};
      for (int64_t d : output.sizes()) stacked.push_back(d);
      at::Tensor parts = received.view(stacked);
      if (op == ReduceOp::kMax) {
        output.copy_(std::get<0>(parts.max(0)));
      } else if (op == ReduceOp::kMin) {
        output.copy_(std::get<0>(parts.min(0)));
      } else {
        at::sum_out(output, parts, {0});
        if (op == ReduceOp::kAvg) output.div_(n);
      }
    };
    return wrap(backend_->alltoall_base(received, source, noSplits, noSplits, opts),
                "reduce_scatter", {source, received}, reduceLocally);
  }

  WorkHandle sendAsync(const at::Tensor& tensor, int peer, int tag) override {
    checkPeer(peer, "send to");
    at::Tensor payload = stagedOnHost(tensor) ? tensor.to(at::kCPU) : tensor.contiguous();
    std::vector<at::Tensor> tensors{payload};
    std::string what = "send to " + describePeer(peer);
    c10::intrusive_ptr<c10d::Work> work = backend_->send(tensors, peer, tag);
    if (spec_.backend != "gloo") return wrap(std::move(work), what, tensors);
    // Gloo marks a send done only for the thread that waits for it: the
    // group's watcher waits, so isCompleted() can answer (send_watcher.h).
    what += " on group " + describeGroup();
    auto watched = sendWatcher_.watch(std::move(work), spec_.options.timeout, what);
    return std::make_unique<C10dWork>(c10::intrusive_ptr<c10d::Work>(), what, spec_.options.timeout,
                                      WaitMode::kHostBounded, std::move(tensors),
                                      std::function<void()>(), std::move(watched));
  }

  WorkHandle recvAsync(at::Tensor& tensor, int peer, int tag) override {
    requireContiguous(tensor, "recv", spec_.name);
    checkPeer(peer, "recv from");
    std::string what = "recv from " + describePeer(peer);
    if (stagedOnHost(tensor)) {
      at::Tensor host = at::empty(tensor.sizes(), tensor.options().device(at::kCPU));
      std::vector<at::Tensor> tensors{host};
      return wrap(backend_->recv(tensors, peer, tag), what, {host, tensor},
                  [tensor, host]() mutable { tensor.copy_(host); });
    }
    std::vector<at::Tensor> tensors{tensor};
    return wrap(backend_->recv(tensors, peer, tag), what, tensors);
  }

  void barrier() override {
    c10d::BarrierOptions opts;
    opts.timeout = spec_.options.timeout;
    wrap(backend_->barrier(opts), "barrier", {})->wait();
  }

 private:
  WorkHandle wrap(c10::intrusive_ptr<c10d::Work> work, const std::string& op,
                  std::vector<at::Tensor> keepAlive, std::function<void()> onDone = {}) {
    WaitMode mode = spec_.backend == "nccl" ? WaitMode::kStreamOrdered : WaitMode::kHostBounded;
    return std::make_unique<C10dWork>(std::move(work), op + " on group " + describeGroup(),
                                      spec_.options.timeout, mode, std::move(keepAlive),
                                      std::move(onDone));
  }

  // Gloo's point-to-point reads and writes host memory only; its collectives
  // take GPU tensors themselves.
  bool stagedOnHost(const at::Tensor& tensor) const {
    return spec_.backend == "gloo" && !tensor.is_cpu();
  }

  std::function<void()> averageIf(ReduceOp op, at::Tensor tensor) const {
    if (op != ReduceOp::kAvg) return {};
    int n = size();
    return [tensor, n]() mutable { tensor.div_(n); };
  }

  std::string describeGroup() const {
    std::string text = spec_.name + " (global ranks ";
    for (size_t i = 0; i < spec_.globalRanks.size(); ++i) {
      text += (i ? "," : "") + std::to_string(spec_.globalRanks[i]);
    }
    return text + ")";
  }

  void checkPeer(int peer, const char* what) const {
    if (peer < 0 || peer >= size()) {
      throw Error(std::string(what) + " rank " + std::to_string(peer) + ": group " + spec_.name +
                  " has ranks [0, " + std::to_string(size()) + ")");
    }
  }

  GroupSpec spec_;
  c10::intrusive_ptr<c10d::Backend> backend_;
  SendWatcher sendWatcher_;  // Gloo's sends (send_watcher.h); goes before the backend
};

c10::intrusive_ptr<c10d::Backend> createGloo(const GroupSpec& spec,
                                             const c10::intrusive_ptr<c10d::Store>& store) {
  auto options = c10d::ProcessGroupGloo::Options::create(spec.options.timeout);
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(iface));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(spec.localAddress));
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(
      store, spec.rank, static_cast<int>(spec.globalRanks.size()), options);
}

#ifdef STRATA_WITH_NCCL
c10::intrusive_ptr<c10d::Backend> createNccl(const GroupSpec& spec,
                                             const c10::intrusive_ptr<c10d::Store>& store) {
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(
      store, spec.rank, static_cast<int>(spec.globalRanks.size()),
      compat::ncclOptions(spec.options.timeout, spec.name));
}
#endif

}  // namespace

bool ncclCompiledIn() {
#ifdef STRATA_WITH_NCCL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> createC10dCommunicator(const GroupSpec& spec,
                                                     const c10::intrusive_ptr<c10d::Store>& store) {
  auto groupStore = c10::make_intrusive<c10d::PrefixStore>("group/" + spec.name, store);
  c10::intrusive_ptr<c10d::Backend> backend;
  try {
    if (spec.backend == "gloo") {
      backend = createGloo(spec, groupStore);
    } else if (spec.backend == "nccl") {
#ifdef STRATA_WITH_NCCL
      backend = createNccl(spec, groupStore);
#else
      throw ConfigError(
          "backend 'nccl' requested but this Strata was built against a LibTorch without "
          "CUDA/NCCL; use --backend gloo or rebuild with a CUDA LibTorch");
#endif
    } else {
      throw ConfigError("unknown communication backend '" + spec.backend + "' (known: gloo, nccl)");
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    rethrowNamed(e, "connecting group " + spec.name, spec.options.timeout);
  }
  return std::make_unique<C10dCommunicator>(spec, std::move(backend));
}

}  // namespace strata

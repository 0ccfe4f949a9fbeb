#include "runtime/shm/shm_communicator.h"

#include <ATen/ATen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>

#include "runtime/collective_checks.h"
#include "runtime/ordered_worker.h"
#include "runtime/shm/shm_barrier.h"
#include "runtime/shm/shm_buffer_registry.h"
#include "runtime/shm/shm_claimed_reduce.h"
#include "runtime/shm/shm_group_segment.h"
#include "runtime/shm/shm_helper_policy.h"
#include "runtime/shm/shm_op_descriptor.h"
#include "runtime/shm/shm_op_log.h"
#include "runtime/shm/shm_p2p.h"
#include "runtime/shm/shm_reduce.h"
#include "runtime/shm/shm_segment.h"
#include "strata/error.h"
#include "strata/util/log.h"

namespace strata {
namespace {

// Bytes each member stages per chunk. Two sets of n slots (double buffering
// lets chunk c + 1 be written while slow members still read chunk c), so a
// group of 8 maps 16 MiB.
constexpr std::size_t kSlotBytes = std::size_t{1} << 20;

// The segment's first pages: the barrier, each member's descriptor of the
// staged op in flight (one row per slot set), the ring of in-place ops, and
// where each member keeps its pid (probing whether members may read each
// other's memory: shm_p2p.h). Then the staging slots, then the
// point-to-point channels.
struct ShmHeader {
  ShmBarrierState barrier;
  ShmOpDescriptor ops[2][ShmBarrierState::kMaxMembers];
  ClaimedOpRing claimed;
  ShmOpLogState log;
  uint64_t pidAddress[ShmBarrierState::kMaxMembers];
};
constexpr std::size_t kSegmentPageBytes = 4096;
constexpr std::size_t kHeaderBytes =
    (sizeof(ShmHeader) + kSegmentPageBytes - 1) / kSegmentPageBytes * kSegmentPageBytes;

std::size_t slotsBytes(int members) { return 2 * static_cast<std::size_t>(members) * kSlotBytes; }
std::size_t segmentBytes(int members) {
  return kHeaderBytes + slotsBytes(members) + ShmMailboxes::bytesFor(members);
}

bool supported(const at::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() != at::kBool &&
         (at::isFloatingType(t.scalar_type()) || at::isIntegralType(t.scalar_type(), false));
}

class ShmWork : public Work {
 public:
  ShmWork(OrderedWorker* worker, OrderedWorker::TaskHandle task, std::string what)
      : worker_(worker), task_(std::move(task)), what_(std::move(what)) {}
  void wait() override {
    if (done_) return;
    worker_->wait(task_, what_);
    done_ = true;
  }
  bool isCompleted() override { return done_; }

 private:
  OrderedWorker* worker_;
  OrderedWorker::TaskHandle task_;
  std::string what_;
  bool done_ = false;
};

// An in-place all-reduce: waiting finishes it (helping with its pieces).
class ClaimedWork : public Work {
 public:
  explicit ClaimedWork(std::shared_ptr<ClaimedAllReduce> op) : op_(std::move(op)) {}
  void wait() override { op_->finish(); }
  bool isCompleted() override { return op_->finished(); }

 private:
  std::shared_ptr<ClaimedAllReduce> op_;
};

class SharedMemoryCommunicator : public Communicator {
 public:
  SharedMemoryCommunicator(std::shared_ptr<Communicator> inner,
                           std::unique_ptr<SharedSegment> segment, ShmHelperPolicy helperPolicy,
                           int processesOnHost)
      : inner_(std::move(inner)),
        segment_(std::move(segment)),
        header_(static_cast<ShmHeader*>(segment_->data())),
        barrier_(&header_->barrier, inner_->size(), inner_->rank()),
        buffers_(inner_->size(), inner_->rank()),
        log_(&header_->log, inner_->size(), inner_->rank()),
        helperPolicy_(helperPolicy),
        processesOnHost_(processesOnHost),
        worker_(2 * inner_->options().timeout) {}

  // Collective (one all-reduce): whether every member may read the next
  // member's memory decides where large point-to-point messages go.
  void startPointToPoint() {
    int n = size();
    header_->pidAddress[rank()] = reinterpret_cast<uint64_t>(&myPid_);
    barrier_.arriveAndWait(options().timeout, "point-to-point setup on group " + name());
    int next = (rank() + 1) % n;
    bool readable = canReadPeerMemory(header_->barrier.pids[next], header_->pidAddress[next],
                                      static_cast<uint64_t>(header_->barrier.pids[next]));
    at::Tensor all = at::full({1}, readable ? 1 : 0, at::kInt);
    allReduce(all, ReduceOp::kMin);
    bool singleCopy = all.item<int>() == 1;
    if (!singleCopy && rank() == 0) {
      logWarning("group " + name() + ": messages over " +
                 std::to_string(ShmP2pChannel::kInlineBytes) +
                 " bytes between its ranks go through Gloo: this host refuses process_vm_readv "
                 "between them (ptrace rules or a seccomp profile)");
    }
    auto* channels = static_cast<uint8_t*>(segment_->data()) + kHeaderBytes + slotsBytes(n);
    ShmMailboxes::Group group{
        channels, n, rank(), header_->barrier.pids, options().timeout, [this](int peer) {
          return describePeer(peer);
        }};
    mailboxes_ = std::make_unique<ShmMailboxes>(std::move(group), singleCopy);
  }

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  const std::string& name() const override { return inner_->name(); }
  const std::vector<int>& globalRanks() const override { return inner_->globalRanks(); }
  const char* backend() const override { return "gloo+shm"; }
  const CommOptions& options() const override { return inner_->options(); }

  ShmBarrier& barrierState() { return barrier_; }

  WorkHandle allReduceAsync(at::Tensor& tensor, ReduceOp op) override {
    if (!supported(tensor)) return inner_->allReduceAsync(tensor, op);
    requireContiguous(tensor, "all_reduce", name());
    checkAverageable(tensor, op, "all_reduce", name());
    if (std::optional<BufferPlacement> where = buffers_.find(tensor)) {
      return startClaimedAllReduce(tensor, op, *where);
    }
    ShmOpDescriptor mine = describeOp(ShmOpKind::kAllReduce, tensor, op);
    return submit("all_reduce", mine, [this, tensor, op, mine] { runAllReduce(tensor, op, mine); });
  }

  WorkHandle allGatherAsync(at::Tensor& output, const at::Tensor& input) override {
    if (!supported(output) || !supported(input)) return inner_->allGatherAsync(output, input);
    requireContiguous(output, "all_gather", name());
    checkStacked(output, input, "all_gather", "output", "input", name(), size());
    at::Tensor source = input.contiguous();
    ShmOpDescriptor mine = describeOp(ShmOpKind::kAllGather, input, ReduceOp::kSum);
    return submit("all_gather", mine,
                  [this, output, source, mine] { runAllGather(output, source, mine); });
  }

  WorkHandle reduceScatterAsync(at::Tensor& output, const at::Tensor& input, ReduceOp op) override {
    if (!supported(output) || !supported(input))
      return inner_->reduceScatterAsync(output, input, op);
    requireContiguous(output, "reduce_scatter", name());
    checkStacked(input, output, "reduce_scatter", "input", "output", name(), size());
    checkAverageable(output, op, "reduce_scatter", name());
    if (std::optional<BufferPlacement> where = buffers_.find(input)) {
      ShmOpDescriptor mine =
          describeOp(ShmOpKind::kReduceScatterInPlace, input, op, where->id, where->offset);
      return submit("reduce_scatter", mine, [this, output, input, op, where = *where, mine] {
        runReduceScatterInPlace(output, input, op, where, mine);
      });
    }
    at::Tensor source = input.contiguous();
    ShmOpDescriptor mine = describeOp(ShmOpKind::kReduceScatter, output, op);
    return submit("reduce_scatter", mine,
                  [this, output, source, op, mine] { runReduceScatter(output, source, op, mine); });
  }

  WorkHandle broadcastAsync(at::Tensor& tensor, int root) override {
    return inner_->broadcastAsync(tensor, root);
  }
  WorkHandle sendAsync(const at::Tensor& tensor, int peer, int tag) override {
    if (!travelsHere(tensor, peer)) return inner_->sendAsync(tensor, peer, tag);
    return mailboxes_->send(tensor, peer, tag);
  }
  WorkHandle recvAsync(at::Tensor& tensor, int peer, int tag) override {
    if (!travelsHere(tensor, peer)) return inner_->recvAsync(tensor, peer, tag);
    requireContiguous(tensor, "recv", name());
    return mailboxes_->recv(tensor, peer, tag);
  }
  void barrier() override { inner_->barrier(); }

  at::Tensor allocateCollectiveBuffer(int64_t numel, const at::TensorOptions& options) override {
    at::Tensor probe = at::empty({0}, options);
    if (numel <= 0 || !supported(probe) || options.requires_grad())
      return Communicator::allocateCollectiveBuffer(numel, options);
    std::size_t region = CollectiveBufferRegistry::regionBytesFor(numel, probe.element_size());
    GroupSegment placed = mapSegmentTogether(*inner_, region * size(), "buf" + name());
    if (!placed.segment) {
      if (rank() == 0) {
        logWarning("group " + name() + ": a collective buffer of " +
                   std::to_string(region * size()) +
                   " bytes is in ordinary memory (its collectives copy)" +
                   (placed.problem.empty() ? "" : ": " + placed.problem));
      }
      return Communicator::allocateCollectiveBuffer(numel, options);
    }
    return buffers_.add(std::move(placed.segment), numel, probe.scalar_type());
  }

 private:
  // CPU messages to another member go through the mailboxes when their size
  // allows (both sides decide alike); the rest, and bad peers, go to inner_.
  bool travelsHere(const at::Tensor& tensor, int peer) const {
    return mailboxes_ && tensor.device().is_cpu() && peer >= 0 && peer < size() && peer != rank() &&
           mailboxes_->carries(tensor.nbytes());
  }

  // Logs a staged op and queues it; while it waits at a barrier, it looks for
  // peers that called something else (shm_op_log.h).
  WorkHandle submit(const char* op, const ShmOpDescriptor& mine, std::function<void()> run) {
    std::string what = std::string(op) + " on group " + name() + " (shared memory)";
    std::lock_guard<std::mutex> lock(issueMutex_);
    uint64_t index = log_.append(mine);
    auto task = worker_.submit([this, index, run = std::move(run)] {
      waitingIn_ = index;
      run();
    });
    return std::make_unique<ShmWork>(&worker_, std::move(task), what);
  }

  std::function<void()> checkPeersWhileWaiting(uint64_t index) {
    return [this, index] { log_.checkWhileWaiting(index, "group " + name() + " (shared memory)"); };
  }

  // Flips to the other set of slots and descriptors: see kSlotBytes.
  int nextSet() { return set_ ^= 1; }

  // Member `member`'s slot of `set`, as `length` elements of `dtype`.
  at::Tensor slot(int set, int member, int64_t length, at::ScalarType dtype) {
    auto* base = static_cast<uint8_t*>(segment_->data()) + kHeaderBytes;
    void* where = base + (static_cast<std::size_t>(set) * size() + member) * kSlotBytes;
    return at::from_blob(where, {length}, at::TensorOptions(dtype));
  }

  void meet(const char* op) {
    barrier_.arriveAndWait(options().timeout, std::string(op) + " on group " + name(),
                           checkPeersWhileWaiting(waitingIn_));
  }

  // The first meeting of an op: every member says what it is doing, and all
  // check that they agree before touching each other's data.
  void meetAgreeing(int set, const ShmOpDescriptor& mine, const char* op) {
    header_->ops[set][rank()] = mine;
    meet(op);
    checkMembersAgree(header_->ops[set], size(), std::string(op) + " on group " + name());
  }

  // A staged op checks agreement at its first chunk's meeting only.
  void meetForChunk(bool first, int set, const ShmOpDescriptor& mine, const char* op) {
    if (first) {
      meetAgreeing(set, mine, op);
    } else {
      meet(op);
    }
  }

  // Per chunk: stage mine; reduce my share of every slot into slot 0; read
  // slot 0 back.
  void runAllReduce(at::Tensor tensor, ReduceOp op, const ShmOpDescriptor& mine) {
    at::Tensor flat = tensor.view({-1});
    int64_t chunk = kSlotBytes / tensor.element_size();
    for (int64_t offset = 0; offset < flat.numel(); offset += chunk) {
      int64_t length = std::min(chunk, flat.numel() - offset);
      int set = nextSet();
      slot(set, rank(), length, tensor.scalar_type()).copy_(flat.narrow(0, offset, length));
      meetForChunk(offset == 0, set, mine, "all_reduce");
      auto [lo, hi] = shareOf(length, rank(), size());
      if (hi > lo) {
        std::vector<at::Tensor> shares;
        for (int j = 0; j < size(); ++j)
          shares.push_back(slot(set, j, length, tensor.scalar_type()).narrow(0, lo, hi - lo));
        reduceInto(shares[0], shares, op);
      }
      meet("all_reduce");
      flat.narrow(0, offset, length).copy_(slot(set, 0, length, tensor.scalar_type()));
    }
  }

  // Every member's buffer is in the segment: arrive and return; waiting
  // reduces pieces (shm_claimed_reduce.h), and so does this member's worker
  // once all have arrived, where the host has a core to spare for it
  // (shm_helper_policy.h).
  // The op kSlots earlier took the same slot; this member finishes it first
  // if nobody waited for it, so the slot can be freed.
  WorkHandle startClaimedAllReduce(const at::Tensor& tensor, ReduceOp op,
                                   const BufferPlacement& where) {
    ShmOpDescriptor mine =
        describeOp(ShmOpKind::kAllReduceInPlace, tensor, op, where.id, where.offset);
    std::lock_guard<std::mutex> lock(issueMutex_);
    uint64_t index = log_.append(mine);
    uint64_t sequence = claimedSequence_++;
    std::shared_ptr<ClaimedAllReduce>& inSlot = claimedInFlight_[sequence % ClaimedOpRing::kSlots];
    if (inSlot) inSlot->finish();
    ClaimedGroup group{&header_->claimed,
                       header_->barrier.pids,
                       size(),
                       rank(),
                       options().timeout,
                       "all_reduce on group " + name() + " (shared memory)"};
    inSlot = std::make_shared<ClaimedAllReduce>(group, sequence, buffers_.regions(where, tensor),
                                                op, mine, checkPeersWhileWaiting(index));
    if (workerShouldHelp(helperPolicy_, processesOnHost_)) {
      worker_.submit([started = inSlot] { started->help(/*waitForMembers=*/true); });
    }
    return std::make_unique<ClaimedWork>(inSlot);
  }

  // Per chunk: stage my rows' chunk; copy every member's chunk out.
  void runAllGather(at::Tensor output, at::Tensor input, const ShmOpDescriptor& mine) {
    at::Tensor in = input.view({-1}), out = output.view({-1});
    int64_t per = in.numel(), chunk = kSlotBytes / input.element_size();
    for (int64_t offset = 0; offset < per; offset += chunk) {
      int64_t length = std::min(chunk, per - offset);
      int set = nextSet();
      slot(set, rank(), length, input.scalar_type()).copy_(in.narrow(0, offset, length));
      meetForChunk(offset == 0, set, mine, "all_gather");
      for (int j = 0; j < size(); ++j)
        out.narrow(0, j * per + offset, length).copy_(slot(set, j, length, input.scalar_type()));
    }
  }

  // Per chunk: stage, for every member d, my part destined to d; reduce the
  // parts destined to me from every slot.
  void runReduceScatter(at::Tensor output, at::Tensor input, ReduceOp op,
                        const ShmOpDescriptor& mine) {
    at::Tensor in = input.view({-1}), out = output.view({-1});
    int64_t per = out.numel(), chunk = kSlotBytes / output.element_size() / size();
    for (int64_t offset = 0; offset < per; offset += chunk) {
      int64_t length = std::min(chunk, per - offset);
      int set = nextSet();
      at::Tensor staged = slot(set, rank(), length * size(), output.scalar_type());
      for (int d = 0; d < size(); ++d)
        staged.narrow(0, d * length, length).copy_(in.narrow(0, d * per + offset, length));
      meetForChunk(offset == 0, set, mine, "reduce_scatter");
      std::vector<at::Tensor> parts;
      for (int j = 0; j < size(); ++j) {
        parts.push_back(
            slot(set, j, length * size(), output.scalar_type()).narrow(0, rank() * length, length));
      }
      at::Tensor acc = out.narrow(0, offset, length);
      reduceInto(acc, parts, op);
    }
  }

  // The input is in a collective buffer: reduce my chunk straight from every
  // member's copy; the second meeting keeps the inputs unchanged until all
  // have read them.
  void runReduceScatterInPlace(at::Tensor output, const at::Tensor& input, ReduceOp op,
                               const BufferPlacement& where, const ShmOpDescriptor& mine) {
    int set = nextSet();
    meetAgreeing(set, mine, "reduce_scatter");
    reduceScatterFromRegions(output, buffers_.regions(where, input), rank(), op);
    meet("reduce_scatter");
  }

  std::shared_ptr<Communicator> inner_;
  std::unique_ptr<SharedSegment> segment_;
  ShmHeader* header_;
  ShmBarrier barrier_;
  CollectiveBufferRegistry buffers_;
  ShmOpLog log_;
  ShmHelperPolicy helperPolicy_;
  int processesOnHost_;
  std::mutex issueMutex_;  // ops enter the log and the claimed ring in call order
  uint64_t claimedSequence_ = 0;
  std::shared_ptr<ClaimedAllReduce> claimedInFlight_[ClaimedOpRing::kSlots];
  int set_ = 0;             // touched only by the task running on worker_
  uint64_t waitingIn_ = 0;  // log index of that task's op
  // Read by peers probing process_vm_readv: 8 bytes, as the probe reads.
  uint64_t myPid_ = static_cast<uint64_t>(getpid());
  std::unique_ptr<ShmMailboxes> mailboxes_;  // set by startPointToPoint()
  OrderedWorker worker_;                     // last: stops before the segment it uses goes away
};

std::string readFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string inodeOf(const char* path) {
  struct stat s {};
  if (stat(path, &s) != 0) return "?";
  return std::to_string(s.st_dev) + ":" + std::to_string(s.st_ino);
}

// Equal on two processes exactly when they share a kernel, a /dev/shm and a
// pid namespace (so segments and pids mean the same to both), and a network
// namespace: processes in different ones are different hosts to the job (the
// nodes of a rehearsal on one machine), whose traffic must cross the network.
int64_t hostFingerprint() {
  std::string key = readFirstLine("/proc/sys/kernel/random/boot_id") + "|" + inodeOf("/dev/shm") +
                    "|" + inodeOf("/proc/self/ns/pid") + "|" + inodeOf("/proc/self/ns/net");
  return static_cast<int64_t>(std::hash<std::string>{}(key) >> 1);
}

bool allOnThisHost(Communicator& inner) {
  at::Tensor mine = at::full({1}, hostFingerprint(), at::kLong);
  at::Tensor all = at::empty({inner.size()}, at::kLong);
  inner.allGather(all, mine);
  return (all == all[0]).all().item<bool>();
}

bool sharedMemoryDisabled() {
  const char* value = std::getenv("STRATA_SHM");
  return value && std::string(value) == "0";
}

}  // namespace

std::shared_ptr<Communicator> attachSharedMemory(std::shared_ptr<Communicator> inner,
                                                 int processesOnHost) {
  if (inner->size() < 2 || inner->size() > ShmBarrierState::kMaxMembers || sharedMemoryDisabled() ||
      !allOnThisHost(*inner))
    return inner;
  ShmHelperPolicy helperPolicy = shmHelperPolicyFromEnvironment();
  GroupSegment placed = mapSegmentTogether(*inner, segmentBytes(inner->size()), inner->name());
  if (!placed.segment) {
    if (inner->rank() == 0) {
      logWarning("group " + inner->name() +
                 " uses Gloo for its collectives: the shared-memory transport is unavailable" +
                 (placed.problem.empty() ? "" : " (" + placed.problem + ")"));
    }
    return inner;
  }
  auto comm = std::make_shared<SharedMemoryCommunicator>(
      std::move(inner), std::move(placed.segment), helperPolicy, processesOnHost);
  comm->barrierState().join();
  at::Tensor ready = at::zeros({1}, at::kInt);
  comm->allReduce(ready);  // every pid is recorded before anyone can wait on it
  comm->startPointToPoint();
  return comm;
}

}  // namespace strata

#include "runtime/shm/shm_p2p.h"

#include <ATen/ATen.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "runtime/shm/shm_futex.h"
#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {
namespace {

// An entry's life: the sender posts it, one receiver claims it and copies,
// then it is free again (inlined) or done until the sender reuses it.
enum ShmP2pState : uint32_t { kFree = 0, kPosted = 1, kCopying = 2, kDone = 3 };

// Polls before sleeping: a peer in a ping-pong answers within microseconds,
// and a futex sleep and wake-up costs tens of them.
constexpr int kP2pSpinPolls = 4000;

std::size_t channelBytes() {
  constexpr std::size_t align = alignof(ShmP2pChannel);
  return (sizeof(ShmP2pChannel) + align - 1) / align * align;
}

void bump(std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiters) {
  word.fetch_add(1, std::memory_order_seq_cst);
  if (waiters.load(std::memory_order_seq_cst) != 0) futexWakeAll(&word);
}

// Copies `bytes` from `address` in process `pid` into `into`.
void readPeerMemory(pid_t pid, uint64_t address, void* into, std::size_t bytes,
                    const std::string& what) {
  std::size_t done = 0;
  while (done < bytes) {
    iovec local{static_cast<char*>(into) + done, bytes - done};
    iovec remote{reinterpret_cast<char*>(address) + done, bytes - done};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ESRCH)
      throw PeerError(what + " failed (a peer exited): the sender exited mid-copy");
    if (n < 0) throw SystemError(what + ": process_vm_readv", errno);
    if (n == 0)
      throw PeerError(what + " failed (a peer exited): the sender's buffer went away mid-copy");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

bool canReadPeerMemory(pid_t pid, uint64_t address, uint64_t expected) {
  uint64_t value = 0;
  iovec local{&value, sizeof value};
  iovec remote{reinterpret_cast<void*>(address), sizeof value};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof value && value == expected;
}

// A send: complete when posted (inlined), else when the receiver has copied.
// Dropped unfinished (the sender is failing), it withdraws its message, or
// waits out a copy already under way, so no one reads freed memory.
class ShmSendWork : public Work {
 public:
  ShmSendWork(ShmMailboxes* boxes, int peer, int tag, int index, uint32_t generation,
              at::Tensor payload)
      : boxes_(boxes),
        peer_(peer),
        tag_(tag),
        index_(index),
        generation_(generation),
        payload_(std::move(payload)) {}

  ~ShmSendWork() override {
    if (!payload_.defined()) return;
    std::lock_guard<std::mutex> lock(boxes_->sendMutex_);
    if (finished()) return;
    uint32_t posted = kPosted;
    if (entry().state.compare_exchange_strong(posted, kFree)) return;
    try {
      wait();
    } catch (const Error&) {
      // The receiver is gone or stuck mid-copy: nothing is left to protect.
    }
  }

  void wait() override {
    if (!payload_.defined()) return;
    ShmP2pChannel& ch = boxes_->channel(boxes_->group_.rank, peer_);
    boxes_->waitFor(
        ch.completed, ch.senderWaiting, [this] { return finished(); }, peer_,
        boxes_->describe("send to", peer_, tag_));
    payload_ = at::Tensor();
  }

  bool isCompleted() override { return !payload_.defined() || finished(); }

 private:
  ShmP2pEntry& entry() const { return boxes_->channel(boxes_->group_.rank, peer_).entries[index_]; }
  // The receiver finished, or the entry was reused (which needs it finished).
  bool finished() const {
    ShmP2pEntry& e = entry();
    return e.generation.load(std::memory_order_relaxed) != generation_ ||
           e.state.load(std::memory_order_acquire) == kDone;
  }

  ShmMailboxes* boxes_;
  int peer_;
  int tag_;
  int index_;
  uint32_t generation_;
  at::Tensor payload_;  // the sender's memory the receiver reads; undefined once done
};

// A receive: all its work happens in wait(), the message being posted already
// or posted later.
class ShmRecvWork : public Work {
 public:
  ShmRecvWork(const ShmMailboxes* boxes, at::Tensor tensor, int peer, int tag)
      : boxes_(boxes), tensor_(std::move(tensor)), peer_(peer), tag_(tag) {}
  void wait() override {
    if (done_) return;
    boxes_->receive(tensor_, peer_, tag_);
    done_ = true;
  }
  bool isCompleted() override { return done_; }  // the copy happens in wait()

 private:
  const ShmMailboxes* boxes_;
  at::Tensor tensor_;
  int peer_;
  int tag_;
  bool done_ = false;
};

std::size_t ShmMailboxes::bytesFor(int members) {
  return static_cast<std::size_t>(members) * members * channelBytes();
}

ShmMailboxes::ShmMailboxes(Group group, bool singleCopy)
    : group_(std::move(group)), singleCopy_(singleCopy), nextSequence_(group_.members, 0) {}

bool ShmMailboxes::carries(std::size_t bytes) const {
  return singleCopy_ || bytes <= ShmP2pChannel::kInlineBytes;
}

ShmP2pChannel& ShmMailboxes::channel(int from, int to) const {
  auto* base = static_cast<uint8_t*>(group_.channels);
  std::size_t index = static_cast<std::size_t>(from) * group_.members + to;
  return *reinterpret_cast<ShmP2pChannel*>(base + index * channelBytes());
}

std::string ShmMailboxes::describe(const char* op, int peer, int tag) const {
  return std::string(op) + " " + group_.describePeer(peer) + " (tag " + std::to_string(tag) +
         ", shared memory)";
}

WorkHandle ShmMailboxes::send(const at::Tensor& tensor, int peer, int tag) {
  at::Tensor source = tensor.contiguous();
  std::size_t bytes = source.nbytes();
  bool inlined = bytes <= ShmP2pChannel::kInlineBytes;
  ShmP2pChannel& ch = channel(group_.rank, peer);
  std::lock_guard<std::mutex> lock(sendMutex_);
  int index = claimFreeEntry(ch, peer, tag);
  ShmP2pEntry& e = ch.entries[index];
  uint32_t generation = e.generation.load(std::memory_order_relaxed) + 1;
  e.generation.store(generation, std::memory_order_relaxed);
  e.tag = tag;
  e.sequence = nextSequence_[peer]++;
  e.bytes = bytes;
  e.inlined = inlined ? 1 : 0;
  if (inlined) {
    std::memcpy(ch.payload[index], source.data_ptr(), bytes);
  } else {
    e.address = reinterpret_cast<uint64_t>(source.data_ptr());
  }
  e.state.store(kPosted, std::memory_order_release);
  bump(ch.posted, ch.receiverWaiting);
  return std::make_unique<ShmSendWork>(this, peer, tag, index, generation,
                                       inlined ? at::Tensor() : source);
}

int ShmMailboxes::claimFreeEntry(ShmP2pChannel& ch, int peer, int tag) {
  int found = -1;
  auto anyFree = [&] {
    for (int i = 0; i < ShmP2pChannel::kEntries; ++i) {
      uint32_t state = ch.entries[i].state.load(std::memory_order_acquire);
      if (state == kFree || state == kDone) {
        found = i;
        return true;
      }
    }
    return false;
  };
  waitFor(ch.completed, ch.senderWaiting, anyFree, peer,
          describe("send to", peer, tag) + ", with all " + std::to_string(ShmP2pChannel::kEntries) +
              " messages to that peer unreceived,");
  return found;
}

WorkHandle ShmMailboxes::recv(at::Tensor& tensor, int peer, int tag) {
  return std::make_unique<ShmRecvWork>(this, tensor, peer, tag);
}

void ShmMailboxes::receive(at::Tensor& tensor, int peer, int tag) const {
  ShmP2pChannel& ch = channel(peer, group_.rank);
  int taken = -1;
  // The earliest posted message with this tag, claimed against other threads.
  auto claim = [&] {
    int best = -1;
    for (int i = 0; i < ShmP2pChannel::kEntries; ++i) {
      const ShmP2pEntry& e = ch.entries[i];
      if (e.state.load(std::memory_order_acquire) != kPosted || e.tag != tag) continue;
      if (best < 0 || e.sequence < ch.entries[best].sequence) best = i;
    }
    uint32_t posted = kPosted;
    if (best < 0 || !ch.entries[best].state.compare_exchange_strong(posted, kCopying)) return false;
    taken = best;
    return true;
  };
  std::string what = describe("recv from", peer, tag);
  waitFor(ch.posted, ch.receiverWaiting, claim, peer, what);
  ShmP2pEntry& e = ch.entries[taken];
  if (e.bytes != tensor.nbytes()) {
    e.state.store(kPosted, std::memory_order_release);
    throw ProtocolError(what + ": the message holds " + std::to_string(e.bytes) +
                        " bytes but the receive expects " + std::to_string(tensor.nbytes()));
  }
  if (e.inlined) {
    std::memcpy(tensor.data_ptr(), ch.payload[taken], e.bytes);
  } else {
    readPeerMemory(group_.pids[peer], e.address, tensor.data_ptr(), e.bytes, what);
  }
  e.state.store(e.inlined ? kFree : kDone, std::memory_order_release);
  bump(ch.completed, ch.senderWaiting);
}

void ShmMailboxes::waitFor(std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiters,
                           const std::function<bool()>& ready, int peer,
                           const std::string& what) const {
  uint32_t seen = word.load(std::memory_order_acquire);
  if (ready()) return;
  for (int poll = 0; poll < kP2pSpinPolls; ++poll) {
    uint32_t now = word.load(std::memory_order_acquire);
    if (now != seen) {
      seen = now;
      if (ready()) return;
    }
    __builtin_ia32_pause();
  }
  auto deadline = std::chrono::steady_clock::now() + group_.timeout;
  for (;;) {
    waiters.fetch_add(1, std::memory_order_seq_cst);
    if (word.load(std::memory_order_seq_cst) == seen)
      futexWaitSlice(&word, seen, kFutexSleepSliceNs);
    waiters.fetch_sub(1, std::memory_order_seq_cst);
    seen = word.load(std::memory_order_acquire);
    if (ready()) return;
    if (processExited(group_.pids[peer])) {
      throw PeerError(what + " failed (a peer exited): shared-memory transport");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw TimeoutError(what + " timed out after " + describeDuration(group_.timeout) +
                         " (the peer stalled or never sent; raise --timeout / STRATA_TIMEOUT if "
                         "the work is legitimately slow)");
    }
  }
}

}  // namespace strata

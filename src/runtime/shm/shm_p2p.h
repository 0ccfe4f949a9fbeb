// Point-to-point messages between the members of a group on one host.
//
// Gloo sends a loopback message through TCP: a rendezvous round trip, kernel
// socket copies and a progress thread, about 155 us for 4 KiB on this kind of
// machine. Here every ordered pair of members (sender, receiver) has a
// channel in the group's shared segment: a table of message entries and, per
// entry, room for a small payload.
//
// - A message of at most kInlineBytes is copied into its entry: the send is
//   complete when posted, and the receiver copies it out (two small copies).
// - A larger message is posted as the sender's address and length; the
//   receiver copies it straight from the sender's memory with
//   process_vm_readv (one copy, no staging), and the send completes when the
//   receiver has finished. Where the kernel refuses such reads (ptrace rules,
//   a seccomp profile), attachSharedMemory finds out once and sends large
//   messages through the wrapped communicator instead.
//
// Messages between one pair with one tag are received in the order they were
// sent; messages with different tags may be received in any order, as with
// Gloo.
//
// Blocking: a receive blocks in wait() until its message is posted and copied;
// a send's wait() blocks until the receiver has copied it. Both are bounded by
// the group's timeout (TimeoutError naming the peer and tag) and fail with
// PeerError as soon as the peer's process is gone. send() blocks only when
// kEntries messages to the same peer are posted and not yet received (same
// bounds). A receive whose buffer size differs from the message's throws
// ProtocolError naming both sizes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata {

struct ShmP2pEntry {
  std::atomic<uint32_t> state;  // ShmP2pState
  int32_t tag;
  std::atomic<uint32_t> generation;  // bumped by the sender each time it reuses the entry
  uint32_t inlined;                  // 1: the payload is in the entry's inline room
  uint64_t sequence;                 // the sender's posting order on this channel
  uint64_t bytes;
  uint64_t address;  // the sender's address of the payload, when not inlined
};

struct ShmP2pChannel {
  static constexpr int kEntries = 32;
  static constexpr std::size_t kInlineBytes = 4096;
  std::atomic<uint32_t> posted;     // futex word: bumped on each post
  std::atomic<uint32_t> completed;  // futex word: bumped on each receive
  std::atomic<uint32_t> receiverWaiting;
  std::atomic<uint32_t> senderWaiting;
  ShmP2pEntry entries[kEntries];
  alignas(64) uint8_t payload[kEntries][kInlineBytes];
};

// Probes whether this process may read `bytes` at `address` in `pid` with
// process_vm_readv and finds `expected` there.
bool canReadPeerMemory(pid_t pid, uint64_t address, uint64_t expected);

class ShmMailboxes {
 public:
  // Bytes of shared memory the channels of a group of `members` take.
  static std::size_t bytesFor(int members);

  struct Group {
    void* channels;  // bytesFor(members) zeroed bytes in the group's segment
    int members;
    int rank;
    const pid_t* pids;  // every member's pid, indexed by group rank
    std::chrono::milliseconds timeout;
    std::function<std::string(int)> describePeer;  // "rank 1 (global 3) of pp"
  };

  // `singleCopy`: every member may read every other's memory (see the top).
  ShmMailboxes(Group group, bool singleCopy);

  // Whether a message of `bytes` travels here rather than through the wrapped
  // communicator. Sender and receiver decide alike from the size alone.
  bool carries(std::size_t bytes) const;

  WorkHandle send(const at::Tensor& tensor, int peer, int tag);
  WorkHandle recv(at::Tensor& tensor, int peer, int tag);

 private:
  friend class ShmSendWork;
  friend class ShmRecvWork;
  ShmP2pChannel& channel(int from, int to) const;
  int claimFreeEntry(ShmP2pChannel& ch, int peer, int tag);
  // Waits on `word` (which waiters counts on) until `ready()`, checking the
  // deadline and whether `peer` is alive; `what` names the wait in errors.
  void waitFor(std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiters,
               const std::function<bool()>& ready, int peer, const std::string& what) const;
  void receive(at::Tensor& tensor, int peer, int tag) const;
  std::string describe(const char* op, int peer, int tag) const;

  Group group_;
  bool singleCopy_;
  std::mutex sendMutex_;                // entries and sequences of this member's outgoing channels
  std::vector<uint64_t> nextSequence_;  // per peer
};

}  // namespace strata

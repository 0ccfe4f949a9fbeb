// Gloo tells that a send is done only to a thread that waits for it: its work
// object is never marked complete, and only one thread may wait. A watcher
// waits for one communicator's sends on a thread of its own, in the order
// they were posted, so a caller can ask whether one is done without blocking
// (Work::isCompleted) and let go of its buffer as soon as it is delivered,
// instead of at the next wait (a pipeline stage sends hundreds a step).
//
// Blocking: Watched::wait() blocks until the watcher's own wait for that send
// has returned, which the timeout given to watch() bounds; it guards that
// with twice the timeout (TimeoutError) and rethrows whatever the watcher's
// wait threw. Destroying the watcher does not wait for pending sends: its
// thread owns what it touches and ends after the last of them.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "torch_compat.h"

namespace strata {

class SendWatcher {
 public:
  struct Queue;
  class Watched;

  SendWatcher() = default;
  ~SendWatcher();
  SendWatcher(const SendWatcher&) = delete;
  SendWatcher& operator=(const SendWatcher&) = delete;

  // Queues `send` behind the sends watched before it; the watcher waits for
  // it at most `timeout`. `what` names the send in the guard's timeout.
  std::shared_ptr<Watched> watch(c10::intrusive_ptr<c10d::Work> send,
                                 std::chrono::milliseconds timeout, std::string what);

 private:
  std::shared_ptr<Queue> queue_;  // made with the thread, at the first send
  std::thread thread_;
};

class SendWatcher::Watched {
 public:
  Watched(std::shared_ptr<Queue> queue, std::chrono::milliseconds timeout, std::string what);
  // Never blocks.
  bool done() const;
  // Blocks as the header says; rethrows the send's failure.
  void wait();

  // For the watcher's thread, under the queue's mutex.
  std::chrono::milliseconds timeout() const { return timeout_; }
  void finish(std::exception_ptr error);

 private:
  std::shared_ptr<Queue> queue_;  // its mutex guards done_ and error_
  std::chrono::milliseconds timeout_;
  std::string what_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace strata

#include "send_watcher.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {

struct SendWatcher::Queue {
  std::mutex mutex;
  // Notified when a send is queued or done, and when the watcher closes.
  std::condition_variable changed;
  std::deque<std::pair<c10::intrusive_ptr<c10d::Work>, std::shared_ptr<Watched>>> pending;
  int unfinished = 0;  // queued, or being waited for
  bool closing = false;
};

namespace {

// The watcher's thread: each send in turn, until closed with none left.
void watchInOrder(SendWatcher::Queue& queue) {
  std::unique_lock<std::mutex> lock(queue.mutex);
  for (;;) {
    queue.changed.wait(lock, [&] { return !queue.pending.empty() || queue.closing; });
    if (queue.pending.empty()) return;
    auto [send, watched] = std::move(queue.pending.front());
    queue.pending.pop_front();
    std::chrono::milliseconds timeout = watched->timeout();
    lock.unlock();
    std::exception_ptr error;
    try {
      send->wait(timeout);
    } catch (...) {
      error = std::current_exception();
    }
    send.reset();  // Gloo's work holds the sent tensor: let it go now
    lock.lock();
    watched->finish(error);
    --queue.unfinished;
    queue.changed.notify_all();
  }
}

}  // namespace

SendWatcher::~SendWatcher() {
  if (!queue_) return;
  bool idle = false;
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->closing = true;
    idle = queue_->unfinished == 0;
  }
  queue_->changed.notify_all();
  // With a send still unfinished the group is failing: leave the thread to
  // end with that send's timeout rather than hold the caller up until then.
  if (idle) {
    thread_.join();
  } else {
    thread_.detach();
  }
}

std::shared_ptr<SendWatcher::Watched> SendWatcher::watch(c10::intrusive_ptr<c10d::Work> send,
                                                         std::chrono::milliseconds timeout,
                                                         std::string what) {
  if (!queue_) {
    queue_ = std::make_shared<Queue>();
    thread_ = std::thread([queue = queue_] { watchInOrder(*queue); });
  }
  auto watched = std::make_shared<Watched>(queue_, timeout, std::move(what));
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->pending.emplace_back(std::move(send), watched);
    ++queue_->unfinished;
  }
  queue_->changed.notify_all();
  return watched;
}

SendWatcher::Watched::Watched(std::shared_ptr<Queue> queue, std::chrono::milliseconds timeout,
                              std::string what)
    : queue_(std::move(queue)), timeout_(timeout), what_(std::move(what)) {}

bool SendWatcher::Watched::done() const {
  std::lock_guard<std::mutex> lock(queue_->mutex);
  return done_;
}

void SendWatcher::Watched::wait() {
  std::unique_lock<std::mutex> lock(queue_->mutex);
  // The watcher's own wait is bounded by the timeout; this guards against
  // the watcher never reporting.
  if (!queue_->changed.wait_for(lock, timeout_ * 2, [this] { return done_; })) {
    throw TimeoutError(what_ + " timed out: its watcher did not report it within " +
                       describeDuration(timeout_ * 2));
  }
  if (error_) std::rethrow_exception(error_);
}

void SendWatcher::Watched::finish(std::exception_ptr error) {
  done_ = true;
  error_ = std::move(error);
}

}  // namespace strata

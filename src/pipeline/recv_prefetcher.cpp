#include "recv_prefetcher.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata::pipeline {

struct RecvPrefetcher::Shared {
  std::mutex mutex;
  std::condition_variable arrivedOrFailed;
  std::map<int, at::Tensor> arrived;
  std::exception_ptr error;
};

RecvPrefetcher::RecvPrefetcher(std::shared_ptr<Communicator> comm)
    : comm_(std::move(comm)), shared_(std::make_shared<Shared>()) {}

RecvPrefetcher::~RecvPrefetcher() {
  if (thread_.joinable()) thread_.detach();
}

void RecvPrefetcher::start(std::vector<Expected> expected) {
  if (thread_.joinable())
    throw Error("pipeline: a step cannot start after the previous one failed midway");
  shared_ = std::make_shared<Shared>();
  expectedTags_.clear();
  for (const Expected& message : expected) expectedTags_.insert(message.tag);
  if (expected.empty()) return;
  // The thread owns copies of everything it touches, so a detached thread
  // outlives this object safely.
  thread_ = std::thread([comm = comm_, shared = shared_, expected = std::move(expected)] {
    for (const Expected& message : expected) {
      try {
        at::Tensor tensor = comm->recvTensor(message.peer, message.tag, message.device);
        std::lock_guard<std::mutex> lock(shared->mutex);
        shared->arrived[message.tag] = std::move(tensor);
      } catch (...) {
        std::lock_guard<std::mutex> lock(shared->mutex);
        shared->error = std::current_exception();
        shared->arrivedOrFailed.notify_all();
        return;
      }
      shared->arrivedOrFailed.notify_all();
    }
  });
}

at::Tensor RecvPrefetcher::take(int tag) {
  if (!expectedTags_.count(tag)) {
    throw ProtocolError("pipeline: no receive with tag " + std::to_string(tag) + " on " +
                        comm_->name() + " was expected this step");
  }
  std::unique_lock<std::mutex> lock(shared_->mutex);
  // The receiving thread's own wait is bounded by the same timeout; this one
  // only guards against that thread never reporting.
  std::chrono::milliseconds timeout = comm_->options().timeout;
  shared_->arrivedOrFailed.wait_for(lock, timeout * 2,
                                    [&] { return shared_->arrived.count(tag) || shared_->error; });
  auto it = shared_->arrived.find(tag);
  if (it != shared_->arrived.end()) {
    at::Tensor tensor = std::move(it->second);
    shared_->arrived.erase(it);
    return tensor;
  }
  if (shared_->error) std::rethrow_exception(shared_->error);
  throw TimeoutError("pipeline: message with tag " + std::to_string(tag) + " on " + comm_->name() +
                     " did not arrive within " + describeDuration(timeout * 2));
}

void RecvPrefetcher::finish() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (shared_->error) std::rethrow_exception(shared_->error);
}

}  // namespace strata::pipeline

#include "ordered_worker.h"

#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {

struct OrderedWorker::Task {
  std::function<void()> run;
  bool done = false;
  std::exception_ptr error;
};

OrderedWorker::OrderedWorker(std::chrono::milliseconds stallTimeout)
    : stallTimeout_(stallTimeout),
      lastProgress_(std::chrono::steady_clock::now()),
      thread_([this] { loop(); }) {}

OrderedWorker::~OrderedWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

OrderedWorker::TaskHandle OrderedWorker::submit(std::function<void()> run) {
  auto task = std::make_shared<Task>();
  task->run = std::move(run);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(task);
  }
  changed_.notify_all();
  return task;
}

void OrderedWorker::execute(const TaskHandle& task, std::unique_lock<std::mutex>& lock) {
  std::exception_ptr earlier = poisoned_;
  lastProgress_ = std::chrono::steady_clock::now();
  lock.unlock();
  std::exception_ptr error = earlier;
  if (!earlier) {
    try {
      task->run();
    } catch (...) {
      error = std::current_exception();
    }
  }
  lock.lock();
  task->done = true;
  task->error = error;
  if (error && !poisoned_) poisoned_ = error;
  busy_ = false;
  lastProgress_ = std::chrono::steady_clock::now();
  changed_.notify_all();
}

void OrderedWorker::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock,
                  [&] { return (!busy_ && !queue_.empty()) || (stopping_ && queue_.empty()); });
    if (queue_.empty()) return;
    TaskHandle task = queue_.front();
    queue_.pop_front();
    busy_ = true;
    execute(task, lock);
  }
}

void OrderedWorker::wait(const TaskHandle& task, const std::string& what) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!task->done) {
    if (!busy_ && !queue_.empty() && queue_.front() == task) {
      queue_.pop_front();
      busy_ = true;
      execute(task, lock);
      break;
    }
    changed_.wait_for(lock, stallTimeout_);
    if (!task->done && std::chrono::steady_clock::now() - lastProgress_ > stallTimeout_) {
      throw TimeoutError(what + ": no collective made progress for " +
                         describeDuration(stallTimeout_));
    }
  }
  if (task->error) std::rethrow_exception(task->error);
}

}  // namespace strata

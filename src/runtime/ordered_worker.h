// Runs tasks one at a time, in the order they were submitted, on a worker
// thread — the execution model of a communicator's collectives, which every
// member must run in the same order.
//
// A waiter whose task is next in line and not yet started runs it itself, so
// a blocking collective (submit, then wait at once) costs no thread hand-off.
//
// Blocking: wait() returns when the task has run and rethrows what it threw.
// A task that fails poisons the worker: every later task fails at once with
// the same error (the members are out of step after a failed collective).
// wait() throws TimeoutError naming `what` when no task has started or
// finished for `stallTimeout` (each task bounds its own waits; this guards
// against a task that never reports).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace strata {

class OrderedWorker {
 public:
  struct Task;
  using TaskHandle = std::shared_ptr<Task>;

  explicit OrderedWorker(std::chrono::milliseconds stallTimeout);
  ~OrderedWorker();  // runs what is queued, then stops

  TaskHandle submit(std::function<void()> run);
  void wait(const TaskHandle& task, const std::string& what);

 private:
  void loop();
  // Runs `task` with the lock released; the caller holds `lock` and set busy_.
  void execute(const TaskHandle& task, std::unique_lock<std::mutex>& lock);

  std::chrono::milliseconds stallTimeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<TaskHandle> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::exception_ptr poisoned_;
  std::chrono::steady_clock::time_point lastProgress_;
  std::thread thread_;
};

}  // namespace strata

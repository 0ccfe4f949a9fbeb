// A launcher's bounded wait for other launchers: its deadline, and a line
// now and then that says what it waits for, so a wait is never silent. A
// wait polls, calling report() on every pass, which throws StopSignalled
// (stop_signal.h) once the launcher got SIGINT or SIGTERM: no wait outlasts
// a request to stop.
#pragma once

#include <chrono>
#include <string>

#include "stop_signal.h"
#include "strata/runtime/timeouts.h"
#include "strata/util/log.h"

namespace strata {

class WaitProgress {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kReportInterval{5};

  explicit WaitProgress(std::chrono::milliseconds timeout)
      : start_(Clock::now()), deadline_(start_ + timeout), timeout_(timeout) {}
  bool expired() const { return Clock::now() >= deadline_; }
  // Logs `what` at most once per kReportInterval, and not in the first one.
  // Throws StopSignalled when the launcher was asked to stop.
  void report(const std::string& what) {
    throwIfStopSignalled();
    Clock::time_point now = Clock::now();
    if (now < nextReport_) return;
    nextReport_ = now + kReportInterval;
    if (now - start_ < kReportInterval) return;
    auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - start_);
    logMessage(LogLevel::Info,
               what + " (" + describeDuration(waited) + " of " + describeDuration(timeout_) + ")");
  }

 private:
  Clock::time_point start_, deadline_, nextReport_{};
  std::chrono::milliseconds timeout_;
};

}  // namespace strata

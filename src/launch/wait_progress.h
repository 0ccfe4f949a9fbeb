// A launcher's bounded wait for other launchers: its deadline, and a line
// now and then that says what it waits for, so a wait is never silent.
#pragma once

#include <chrono>
#include <string>

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
  void report(const std::string& what) {
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

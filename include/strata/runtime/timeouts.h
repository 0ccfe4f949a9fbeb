// Named timeouts for every blocking call.
//
// One value, from `--timeout SECONDS`, `STRATA_TIMEOUT` or the default, bounds
// every collective, every point-to-point wait and the rendezvous. A stalled peer
// therefore surfaces as a TimeoutError within that time instead of a hang.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace strata {

struct Timeouts {
  // Five minutes: long enough for a first step that profiles or loads a
  // checkpoint, short enough that a stuck job is noticed the same coffee break.
  static constexpr double kDefaultSeconds = 300.0;

  std::chrono::milliseconds collective{static_cast<long>(kDefaultSeconds * 1000)};
  std::chrono::milliseconds rendezvous{static_cast<long>(kDefaultSeconds * 1000)};

  static Timeouts fromSeconds(double seconds);
  // STRATA_TIMEOUT in seconds, or nullopt when it is unset or empty. Throws
  // ConfigError naming the variable and its text when it is not a positive
  // number; the launcher and the workers read it here, so both word it alike.
  static std::optional<double> secondsFromEnvironment();
  // Reads STRATA_TIMEOUT (seconds, > 0). Throws ConfigError when malformed.
  static Timeouts fromEnvironment();
};

// "12.5 s" — for error messages.
std::string describeDuration(std::chrono::milliseconds duration);

}  // namespace strata

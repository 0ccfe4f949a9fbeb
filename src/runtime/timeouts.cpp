#include "strata/runtime/timeouts.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "strata/error.h"
#include "strata/util/parse_number.h"

namespace strata {

Timeouts Timeouts::fromSeconds(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    std::ostringstream message;
    message << "timeout must be a positive number of seconds, got " << seconds;
    throw ConfigError(message.str());
  }
  auto ms = std::chrono::milliseconds(static_cast<long>(std::ceil(seconds * 1000)));
  return Timeouts{ms, ms};
}

std::optional<double> Timeouts::secondsFromEnvironment() {
  const char* text = std::getenv("STRATA_TIMEOUT");
  if (!text || !*text) return std::nullopt;
  std::optional<double> seconds = parseReal(text);
  if (!seconds || !(*seconds > 0)) {
    throw ConfigError(std::string("STRATA_TIMEOUT must be a positive number of seconds, got '") +
                      text + "'");
  }
  return seconds;
}

Timeouts Timeouts::fromEnvironment() {
  std::optional<double> seconds = secondsFromEnvironment();
  return seconds ? fromSeconds(*seconds) : Timeouts{};
}

std::string describeDuration(std::chrono::milliseconds duration) {
  std::ostringstream out;
  out << static_cast<double>(duration.count()) / 1000.0 << " s";
  return out.str();
}

}  // namespace strata

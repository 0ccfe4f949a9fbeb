#include "strata/runtime/timeouts.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "strata/error.h"

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

Timeouts Timeouts::fromEnvironment() {
  const char* text = std::getenv("STRATA_TIMEOUT");
  if (!text || !*text) return Timeouts{};
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds > 0)) {
    throw ConfigError(std::string("STRATA_TIMEOUT must be a positive number of seconds, got '") +
                      text + "'");
  }
  return fromSeconds(seconds);
}

std::string describeDuration(std::chrono::milliseconds duration) {
  std::ostringstream out;
  out << static_cast<double>(duration.count()) / 1000.0 << " s";
  return out.str();
}

}  // namespace strata

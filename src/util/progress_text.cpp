#include "strata/util/progress_text.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace strata::util {

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto total = static_cast<int64_t>(std::llround(seconds));
  char text[32];
  if (total < 60) {
    std::snprintf(text, sizeof(text), "%llds", static_cast<long long>(total));
  } else if (total < 3600) {
    std::snprintf(text, sizeof(text), "%lldm%02llds", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  } else {
    std::snprintf(text, sizeof(text), "%lldh%02lldm", static_cast<long long>(total / 3600),
                  static_cast<long long>(total / 60 % 60));
  }
  return text;
}

double estimateRemainingSeconds(double elapsedSeconds, int64_t done, int64_t total) {
  if (done <= 0) return -1;
  return elapsedSeconds / static_cast<double>(done) * static_cast<double>(total - done);
}

bool stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace strata::util

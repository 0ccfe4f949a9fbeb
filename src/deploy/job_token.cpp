#include "strata/deploy/job_token.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdio>

#include "strata/error.h"

namespace strata::deploy {

std::string generateJobToken() {
  std::array<unsigned char, 32> bytes;
  size_t filled = 0;
  while (filled < bytes.size()) {
    ssize_t got = getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw SystemError("getrandom", errno);
    filled += static_cast<size_t>(got);
  }
  std::string hex;
  for (unsigned char byte : bytes) {
    char digits[3];
    std::snprintf(digits, sizeof digits, "%02x", byte);
    hex += digits;
  }
  return hex;
}

}  // namespace strata::deploy

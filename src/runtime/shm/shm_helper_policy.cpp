#include "runtime/shm/shm_helper_policy.h"

#include <ATen/Parallel.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "strata/error.h"

namespace strata {

ShmHelperPolicy shmHelperPolicyFromEnvironment() {
  const char* value = std::getenv("STRATA_SHM_HELPER");
  if (!value || std::string(value).empty() || std::string(value) == "auto") {
    return ShmHelperPolicy::kAuto;
  }
  if (std::string(value) == "always") return ShmHelperPolicy::kAlways;
  if (std::string(value) == "never") return ShmHelperPolicy::kNever;
  throw ConfigError("STRATA_SHM_HELPER is '" + std::string(value) +
                    "'; expected auto, always or never");
}

bool workerShouldHelp(ShmHelperPolicy policy, int processesOnHost) {
  switch (policy) {
    case ShmHelperPolicy::kAlways:
      return true;
    case ShmHelperPolicy::kNever:
      return false;
    case ShmHelperPolicy::kAuto:
      break;
  }
  long busy = static_cast<long>(processesOnHost) * at::get_num_threads();
  return static_cast<long>(std::thread::hardware_concurrency()) > busy;
}

}  // namespace strata

#include "strata/report/memory.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "strata/util/parse_number.h"

#ifdef STRATA_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace strata::train {
namespace {

// "\t  2048 kB" (the rest of a status line after "Key:") as bytes; -1 when it
// is not blanks, a number and " kB".
int64_t kilobytesField(std::string_view field) {
  constexpr std::string_view kUnit = " kB";
  size_t begin = field.find_first_not_of(" \t");
  if (begin == std::string_view::npos || field.size() < begin + kUnit.size() ||
      field.substr(field.size() - kUnit.size()) != kUnit)
    return -1;
  std::optional<int64_t> kilobytes =
      parseInteger(field.substr(begin, field.size() - kUnit.size() - begin));
  return kilobytes && *kilobytes >= 0 ? *kilobytes * 1024 : -1;
}

}  // namespace

int64_t statusBytes(const std::string& statusText, const std::string& key) {
  std::istringstream lines(statusText);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + ":", 0) == 0) return kilobytesField(line.substr(key.size() + 1));
  }
  return -1;
}

int64_t peakResidentBytes() {
  std::ifstream in("/proc/self/status");
  if (!in) return -1;
  std::ostringstream text;
  text << in.rdbuf();
  return statusBytes(text.str(), "VmHWM");
}

int64_t peakCudaBytes() {
#ifdef STRATA_WITH_CUDA
  if (c10::cuda::device_count() == 0) return -1;
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  // Index 0 of every statistic is StatType::AGGREGATE, all pools together.
  return stats.allocated_bytes[0].peak;
#else
  return -1;
#endif
}

}  // namespace strata::train

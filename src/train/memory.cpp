#include "strata/train/memory.h"

#include <fstream>
#include <sstream>

namespace strata::train {

int64_t statusBytes(const std::string& statusText, const std::string& key) {
  std::istringstream lines(statusText);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t kilobytes = -1;
    std::string unit;
    if (fields >> kilobytes >> unit && unit == "kB" && kilobytes >= 0) return kilobytes * 1024;
    return -1;
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

}  // namespace strata::train

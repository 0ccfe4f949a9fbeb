#include "metrics_file.h"

#include <fstream>
#include <regex>

namespace strata::testing {

std::vector<double> lossesInMetrics(const std::string& metricsPath) {
  std::ifstream in(metricsPath);
  std::vector<double> losses;
  static const std::regex loss("\"loss\":([-0-9.e+]+)");
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (std::regex_search(line, match, loss)) losses.push_back(std::stod(match[1]));
  }
  return losses;
}

}  // namespace strata::testing

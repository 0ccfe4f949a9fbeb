// What a test reads back from a run's metrics.jsonl (strata/report/metrics.h).
#pragma once

#include <string>
#include <vector>

namespace strata::testing {

// The loss of every line, in file order; a file that cannot be read gives none.
std::vector<double> lossesInMetrics(const std::string& metricsPath);

}  // namespace strata::testing

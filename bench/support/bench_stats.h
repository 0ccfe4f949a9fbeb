// Summaries of repeated timings. Benchmarks on this shared machine see
// outliers of several per cent (another process, a page-fault burst), so they
// report medians over interleaved rounds rather than means.
#pragma once

#include <vector>

namespace strata::bench {

// The middle value (the mean of the two middle ones for an even count);
// `values` must not be empty.
double median(std::vector<double> values);

}  // namespace strata::bench

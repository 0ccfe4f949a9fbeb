// Pieces of progress reports shared by training and data preparation: how a
// duration reads, the time a steady rate leaves, and whether stderr is a
// terminal (a bar redrawn in place) or a log (plain lines). Nothing here
// reads a clock, blocks or throws.
#pragma once

#include <cstdint>
#include <string>

namespace strata::util {

// "45s", "3m07s", "2h05m"; "?" when unknown (negative or not finite).
std::string formatDuration(double seconds);
// Remaining time assuming the rate so far: elapsed / done * (total - done);
// negative (unknown) before anything is done.
double estimateRemainingSeconds(double elapsedSeconds, int64_t done, int64_t total);
// Whether the standard error stream is a terminal.
bool stderrIsTerminal();

}  // namespace strata::util

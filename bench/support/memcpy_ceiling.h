// This machine's single-thread copy bandwidth: the ceiling a loopback
// collective with one thread per rank can approach, measured in the same
// run as what it bounds.
#pragma once

namespace strata::bench {

// Best of 10 copies of 64 MiB, in GB/s (bytes copied per second).
double memcpyGbps();

}  // namespace strata::bench

// The address at which peers can reach this process.
#pragma once

#include <string>

namespace strata {

// The local IPv4 address the kernel would use to reach `masterAddr` (found
// with a connected UDP socket; no packet is sent). Loopback masters give
// 127.0.0.1. Throws ConfigError when `masterAddr` does not resolve.
std::string localAddressToward(const std::string& masterAddr);

}  // namespace strata

// Network endpoints as flags and variables spell them, one way for the
// launcher and for `strata k8s`.
//
// Plain text parsing: nothing throws or blocks; std::nullopt means the text is
// not what the function reads, and the caller names the flag or variable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata {

// The largest TCP port.
inline constexpr int64_t kMaxPort = 65535;

// "HOST:PORT" or "[IPV6]:PORT" with PORT in [0, 65535]; nullopt otherwise.
std::optional<std::pair<std::string, int64_t>> parseEndpoint(const std::string& text);

// "a:1, b:2,," -> {"a:1", "b:2"}: comma-separated items, spaces and empty items dropped.
std::vector<std::string> splitEndpoints(const std::string& text);

// etcd's client endpoints: "a:1,http://b:2" -> {"a:1", "b:2"}; nullopt when
// there is none or an entry is not HOST:PORT (plain http only: no TLS).
std::optional<std::vector<std::string>> etcdEndpointsIn(const std::string& text);

}  // namespace strata

// SHA-256 (FIPS 180-4), used to derive the job token's key prefix and its
// public fingerprint without ever putting the token itself on the wire.
#pragma once

#include <string>

namespace strata {

// Lower-case hex digest of `data`.
std::string sha256Hex(const std::string& data);

}  // namespace strata

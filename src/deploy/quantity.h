// Kubernetes resource quantities in the forms people write for CPU, memory
// and storage: an unsigned decimal with an optional suffix, "2", "0.5",
// "500m", "8Gi", "1.5T". Exponent forms ("1e3") are refused.
//
// Nothing blocks. parseQuantity and scaledQuantity throw ConfigError naming
// the flag and the text.
#pragma once

#include <cstdint>
#include <string>

namespace strata::deploy {

struct Quantity {
  int64_t digits = 0;      // the number without its point: 15 for "1.5"
  int fractionDigits = 0;  // digits after the point: 1 for "1.5"
  std::string suffix;      // "", "m", "k", "M", ..., "Ki", "Mi", ..., "Ei"
};

Quantity parseQuantity(const std::string& flag, const std::string& text);

// `text` (a quantity of `flag`) times `count`: "1.5Gi" x 3 = "4.5Gi".
std::string scaledQuantity(const std::string& flag, const std::string& text, int64_t count);

}  // namespace strata::deploy

// Numbers as text that reads back as the same double, in the fewest digits
// ("0.31", not "0.30999999999999999").
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace strata::train {

inline std::string shortestDouble(double value) {
  char text[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

}  // namespace strata::train

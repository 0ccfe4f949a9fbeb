// Numbers as text that reads back as the same double, in the fewest digits
// ("0.31", not "0.30999999999999999").
//
// std::to_chars and std::from_chars rather than snprintf and strtod: neither
// looks at the C locale, so a German LC_NUMERIC cannot turn 0.31 into "0,31"
// in a TOML file or a JSON line. from_chars is used directly, not parseReal,
// because any double, "inf" included, must round-trip here.
#pragma once

#include <charconv>
#include <string>

namespace strata::train {

inline std::string shortestDouble(double value) {
  char text[40];
  char* end = text;
  // Format %.{precision}g, raising the precision until the text reads back exactly.
  for (int precision = 6; precision <= 17; ++precision) {
    end =
        std::to_chars(text, text + sizeof(text), value, std::chars_format::general, precision).ptr;
    double readBack = 0;
    std::from_chars(text, end, readBack);
    if (readBack == value) break;
  }
  return std::string(text, end);
}

}  // namespace strata::train

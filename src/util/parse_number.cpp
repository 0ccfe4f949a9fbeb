#include "strata/util/parse_number.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace strata {
namespace {

// std::from_chars refuses a leading '+', which strtod and TOML accept. The
// '+' is dropped only when a digit could follow, so "+-5" and "+" stay errors.
std::string_view withoutPlus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  return text;
}

// Whether from_chars read all of `text` without a range error.
bool consumedAll(std::string_view text, const std::from_chars_result& result) {
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

}  // namespace

std::optional<int64_t> parseInteger(std::string_view text, int base) {
  text = withoutPlus(text);
  int64_t value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (!consumedAll(text, result)) return std::nullopt;
  return value;
}

std::optional<int> parseInt(std::string_view text) {
  std::optional<int64_t> value = parseInteger(text);
  if (!value || *value < std::numeric_limits<int>::min() ||
      *value > std::numeric_limits<int>::max())
    return std::nullopt;
  return static_cast<int>(*value);
}

std::optional<double> parseReal(std::string_view text) {
  text = withoutPlus(text);
  double value = 0;
  auto result =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (!consumedAll(text, result) || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace strata

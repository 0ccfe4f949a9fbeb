#include "quantity.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

#include "strata/error.h"
#include "strata/util/parse_number.h"

namespace strata::deploy {
namespace {

const std::array<std::string, 13> kSuffixes = {"m",  "k",  "M",  "G",  "T",  "P", "E",
                                               "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
// Enough digits for any quantity a cluster has, and far from int64's limit.
constexpr size_t kMaxDigits = 15;

bool knownSuffix(const std::string& suffix) {
  return suffix.empty() || std::find(kSuffixes.begin(), kSuffixes.end(), suffix) != kSuffixes.end();
}

bool allDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

ConfigError malformed(const std::string& flag, const std::string& text) {
  return ConfigError(flag + " expects a Kubernetes quantity such as 2, 0.5, 500m or 8Gi, got '" +
                     text + "'");
}

std::string withPoint(int64_t digits, int fractionDigits) {
  std::string text = std::to_string(digits);
  if (fractionDigits == 0) return text;
  text.insert(0, std::max<int>(0, fractionDigits + 1 - static_cast<int>(text.size())), '0');
  text.insert(text.size() - fractionDigits, ".");
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

Quantity parseQuantity(const std::string& flag, const std::string& text) {
  size_t numberEnd = text.find_first_not_of("0123456789.");
  std::string number = text.substr(0, numberEnd);
  Quantity quantity;
  quantity.suffix = numberEnd == std::string::npos ? "" : text.substr(numberEnd);
  size_t point = number.find('.');
  std::string whole = number.substr(0, point);
  std::string fraction = point == std::string::npos ? "" : number.substr(point + 1);
  bool wellFormed = allDigits(whole) && (point == std::string::npos || allDigits(fraction)) &&
                    whole.size() + fraction.size() <= kMaxDigits && knownSuffix(quantity.suffix);
  if (!wellFormed) throw malformed(flag, text);
  quantity.digits = *parseInteger(whole + fraction);
  quantity.fractionDigits = static_cast<int>(fraction.size());
  return quantity;
}

std::string scaledQuantity(const std::string& flag, const std::string& text, int64_t count) {
  Quantity quantity = parseQuantity(flag, text);
  if (count < 0 || (count > 0 && quantity.digits > std::numeric_limits<int64_t>::max() / count))
    throw ConfigError(flag + " " + text + " x " + std::to_string(count) + " is out of range");
  return withPoint(quantity.digits * count, quantity.fractionDigits) + quantity.suffix;
}

}  // namespace strata::deploy

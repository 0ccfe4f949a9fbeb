#include "strata/util/json.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace strata {

nlohmann::ordered_json jsonNumber(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

std::string dumpJson(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace strata

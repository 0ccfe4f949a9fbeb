#include "env_switch.h"

#include <cstdlib>
#include <string>

#include "strata/error.h"

namespace strata::ops::detail {

bool switchedOn(const char* variable) {
  const char* choice = std::getenv(variable);
  std::string value = choice != nullptr ? choice : "";
  if (!value.empty() && value != "0" && value != "1")
    throw ConfigError(std::string(variable) + " is '" + value + "'; expected 1 (or unset) or 0");
  return value != "0";
}

}  // namespace strata::ops::detail

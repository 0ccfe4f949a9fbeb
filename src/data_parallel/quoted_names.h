// Parameter names for error messages: 'a', 'b', 'c'. Nothing here throws.
#pragma once

#include <string>
#include <vector>

namespace strata::data_parallel {

inline std::string quotedNames(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

}  // namespace strata::data_parallel

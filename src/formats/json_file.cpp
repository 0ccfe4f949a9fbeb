#include "formats/json_file.h"

#include <filesystem>
#include <fstream>

#include "strata/error.h"

namespace strata::formats {

nlohmann::json readJsonFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(path + ": cannot open " + what +
                      (std::filesystem::exists(path) ? "" : " (no such file)"));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    if (in.bad()) throw ConfigError(path + ": cannot read " + what);
    throw ConfigError(path + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace strata::formats

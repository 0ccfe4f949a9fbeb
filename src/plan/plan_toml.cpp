#include "plan_toml.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "strata/plan/errors.h"

namespace strata::plan {

std::vector<util::TomlEntry> readPlanToml(const std::string& text, const std::string& source) {
  try {
    return util::readToml(text, source);
  } catch (const ConfigError& error) {
    throw PlanError(error.what());
  }
}

void wrongValue(const util::TomlEntry& entry, const std::string& expected) {
  throw PlanError(entry.where + ": " + entry.name() + " expects " + expected + ", got " +
                  util::describeToml(entry.value));
}

std::string stringOf(const util::TomlEntry& entry) {
  if (auto* text = std::get_if<std::string>(&entry.value)) return *text;
  wrongValue(entry, "a string");
}

double numberOf(const util::TomlEntry& entry, const std::string& expected) {
  if (auto* integer = std::get_if<int64_t>(&entry.value)) return static_cast<double>(*integer);
  auto* real = std::get_if<double>(&entry.value);
  // nan and inf are TOML floats, but no size, rate or time of a plan.
  if (!real || !std::isfinite(*real)) wrongValue(entry, expected);
  return *real;
}

std::string readTextFile(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw PlanError("cannot read " + what + " file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace strata::plan

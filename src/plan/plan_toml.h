// The TOML files the planner reads, cluster descriptions and measured
// profiles: flat `key = value` documents read by strata/util/toml.h. Nothing
// blocks; every error is a PlanError naming the file, and the line and key
// where there is one.
#pragma once

#include <string>
#include <vector>

#include "strata/util/toml.h"

namespace strata::plan {

// util::readToml(), its syntax errors rethrown as PlanError.
std::vector<util::TomlEntry> readPlanToml(const std::string& text, const std::string& source);

// Throws PlanError "<file>:<line>: <key> expects <expected>, got <type> <value>".
[[noreturn]] void wrongValue(const util::TomlEntry& entry, const std::string& expected);
// The entry's string, else wrongValue(entry, "a string").
std::string stringOf(const util::TomlEntry& entry);
// The entry's finite number (an integer or a float), else wrongValue(entry, expected).
double numberOf(const util::TomlEntry& entry, const std::string& expected);

// The whole file; throws PlanError "cannot read <what> file '<path>'".
std::string readTextFile(const std::string& path, const std::string& what);

}  // namespace strata::plan

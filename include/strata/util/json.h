// JSON output, one way for all of Strata: build an nlohmann::ordered_json
// (fields stay in the order they are set) and write it with dumpJson.
//
// dumpJson gives every number the shortest text that reads back as the same
// double, escapes every string (quotes, backslashes, control characters) and
// replaces bytes that are not UTF-8 with U+FFFD instead of throwing, so the
// output always parses. JSON has no NaN or infinity: jsonNumber makes them
// null, so a line with an unmeasured or diverged value still parses.
//
// Only nlohmann's forward declarations here; a .cpp that builds JSON includes
// <nlohmann/json.hpp> itself. Nothing here blocks or throws.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace strata {

// `value`, or null when it is NaN or infinite.
nlohmann::ordered_json jsonNumber(double value);

// Compact, on one line.
std::string dumpJson(const nlohmann::ordered_json& value);

}  // namespace strata

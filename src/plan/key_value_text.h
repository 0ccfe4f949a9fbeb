// The `key = value` text that cluster files and measured profiles share:
// one pair per line, `#` starts a comment, blank lines are skipped, a value
// in double quotes loses them. Pure text handling: nothing blocks. Numeric
// values are read with parseReal (strata/util/parse_number.h).
#pragma once

#include <string>
#include <vector>

namespace strata::plan {

struct KeyValueLine {
  std::string where;  // "<source>:<line number>", for messages
  std::string key;
  std::string value;
};

// Throws PlanError "<source>:<n>: expected 'key = value', got '<line>'".
std::vector<KeyValueLine> readKeyValueLines(const std::string& text, const std::string& source);

// The whole file; throws PlanError "cannot read <what> file '<path>'".
std::string readTextFile(const std::string& path, const std::string& what);

}  // namespace strata::plan

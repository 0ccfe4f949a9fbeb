#include "key_value_text.h"

#include <fstream>
#include <sstream>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

std::string trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

std::string unquote(const std::string& value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
    return value.substr(1, value.size() - 2);
  return value;
}

}  // namespace

std::vector<KeyValueLine> readKeyValueLines(const std::string& text, const std::string& source) {
  std::vector<KeyValueLine> pairs;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::string where = source + ":" + std::to_string(number);
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      throw PlanError(where + ": expected 'key = value', got '" + line + "'");
    pairs.push_back({where, trim(line.substr(0, eq)), unquote(trim(line.substr(eq + 1)))});
  }
  return pairs;
}

std::string readTextFile(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw PlanError("cannot read " + what + " file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace strata::plan

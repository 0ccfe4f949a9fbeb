#include "strata/util/flags.h"

#include <algorithm>
#include <sstream>

#include "strata/util/parse_number.h"

namespace strata {

FlagSet::FlagSet(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void FlagSet::fail(const std::string& message) const {
  throw FlagError(command_ + ": " + message + " (see '" + command_ + " --help')");
}

void FlagSet::addInt(const std::string& name, long long* target, const std::string& help,
                     long long min) {
  flags_.push_back({name, help, std::to_string(*target), "N", false,
                    [this, name, target, min](const std::string& v) {
                      std::optional<int64_t> value = parseInteger(v);
                      if (!value) fail("--" + name + " expects an integer, got '" + v + "'");
                      if (*value < min)
                        fail("--" + name + " must be at least " + std::to_string(min) + ", got " +
                             v);
                      *target = *value;
                    }});
}

void FlagSet::addDouble(const std::string& name, double* target, const std::string& help) {
  std::ostringstream text;
  text << *target;
  flags_.push_back({name, help, text.str(), "X", false, [this, name, target](const std::string& v) {
                      std::optional<double> value = parseReal(v);
                      if (!value) fail("--" + name + " expects a number, got '" + v + "'");
                      *target = *value;
                    }});
}

void FlagSet::addString(const std::string& name, std::string* target, const std::string& help) {
  flags_.push_back({name, help, target->empty() ? "\"\"" : *target, "S", false,
                    [target](const std::string& v) { *target = v; }});
}

void FlagSet::addBool(const std::string& name, bool* target, const std::string& help) {
  flags_.push_back({name, help, *target ? "true" : "false", "", true,
                    [this, name, target](const std::string& v) {
                      if (v == "true" || v == "1" || v == "yes") {
                        *target = true;
                      } else if (v == "false" || v == "0" || v == "no") {
                        *target = false;
                      } else {
                        fail("--" + name + " expects true or false, got '" + v + "'");
                      }
                    }});
}

const FlagSet::Flag* FlagSet::find(const std::string& name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

bool FlagSet::wasSet(const std::string& name) const {
  return std::find(seen_.begin(), seen_.end(), name) != seen_.end();
}

ParsedArgs FlagSet::parse(const std::vector<std::string>& args) const {
  ParsedArgs out;
  seen_.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out.rest.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg == "--help" || arg == "-h") {
      out.helpRequested = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (arg.size() > 1 && arg[0] == '-') fail("unknown flag '" + arg + "'");
      out.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool hasValue = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    const Flag* flag = find(name);
    if (!flag && !hasValue && name.rfind("no-", 0) == 0) {
      const Flag* negated = find(name.substr(3));
      if (negated && negated->isSwitch) {
        negated->set("false");
        seen_.push_back(negated->name);
        continue;
      }
    }
    if (!flag) fail("unknown flag '--" + name + "'");
    if (!hasValue) {
      if (flag->isSwitch) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        fail("--" + name + " needs a value");
      }
    }
    flag->set(value);
    seen_.push_back(flag->name);
  }
  return out;
}

std::string FlagSet::help() const {
  std::ostringstream out;
  out << "usage: " << command_ << " [flags]\n\n" << summary_ << "\n\nflags:\n";
  for (const Flag& flag : flags_) {
    std::string left = "  --" + flag.name + (flag.isSwitch ? "" : " " + flag.valueName);
    out << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << flag.help
        << " (default: " << flag.defaultText << ")\n";
  }
  out << "  --help                    show this help\n";
  return out.str();
}

}  // namespace strata

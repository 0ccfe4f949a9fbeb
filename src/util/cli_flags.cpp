#include "strata/util/cli_flags.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <sstream>

#include "strata/util/parse_number.h"

namespace strata {
namespace {

std::string firstName(const std::string& names) { return names.substr(0, names.find(',')); }

// A flag that takes one value, handed as text to `set`. CLI11 only splits
// the command line here; `set` reads the value.
CLI::Option* addValueFlag(CLI::App& command, const std::string& names, const std::string& help,
                          const std::string& valueName, const std::string& defaultText,
                          std::function<void(const std::string&)> set) {
  CLI::callback_t callback = [set](const CLI::results_t& values) {
    set(values.back());
    return true;
  };
  return command.add_option(names, callback, help + " (default: " + defaultText + ")")
      ->type_name(valueName)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// The integer `text` of `flag`, or a FlagError naming the flag and the text.
int64_t integerIn(const CLI::App& command, const std::string& flag, const std::string& text,
                  int64_t min, int64_t max) {
  std::optional<int64_t> value = parseInteger(text);
  if (!value) throw flagError(command, flag + " expects an integer, got '" + text + "'");
  if (*value < min)
    throw flagError(command, flag + " must be at least " + std::to_string(min) + ", got " + text);
  if (*value > max)
    throw flagError(command, flag + " must be at most " + std::to_string(max) + ", got " + text);
  return *value;
}

// The number `text` of `flag`, or a FlagError naming the flag and the text.
double realOf(const CLI::App& command, const std::string& flag, const std::string& text) {
  std::optional<double> value = parseReal(text);
  if (!value) throw flagError(command, flag + " expects a number, got '" + text + "'");
  return *value;
}

}  // namespace

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream list(text);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::string commandName(const CLI::App& command) {
  const CLI::App* parent = command.get_parent();
  return parent ? commandName(*parent) + " " + command.get_name() : command.get_name();
}

FlagError flagError(const CLI::App& command, const std::string& message) {
  std::string name = commandName(command);
  return FlagError(name + ": " + message + " (see '" + name + " --help')");
}

CLI::Option* addIntFlag(CLI::App& command, const std::string& names, int64_t* target,
                        const std::string& help, int64_t min, int64_t max) {
  std::string flag = firstName(names);
  return addValueFlag(command, names, help, "N", std::to_string(*target),
                      [&command, flag, target, min, max](const std::string& text) {
                        *target = integerIn(command, flag, text, min, max);
                      });
}

CLI::Option* addOptionalIntFlag(CLI::App& command, const std::string& names,
                                std::optional<int64_t>* target, const std::string& help,
                                const std::string& unsetText, int64_t min, int64_t max) {
  std::string flag = firstName(names);
  return addValueFlag(command, names, help, "N", unsetText,
                      [&command, flag, target, min, max](const std::string& text) {
                        *target = integerIn(command, flag, text, min, max);
                      });
}

CLI::Option* addRealFlag(CLI::App& command, const std::string& names, double* target,
                         const std::string& help) {
  std::ostringstream defaultText;
  defaultText << *target;
  std::string flag = firstName(names);
  return addValueFlag(
      command, names, help, "X", defaultText.str(),
      [&command, flag, target](const std::string& text) { *target = realOf(command, flag, text); });
}

CLI::Option* addOptionalRealFlag(CLI::App& command, const std::string& names,
                                 std::optional<double>* target, const std::string& help,
                                 const std::string& unsetText) {
  std::string flag = firstName(names);
  return addValueFlag(
      command, names, help, "X", unsetText,
      [&command, flag, target](const std::string& text) { *target = realOf(command, flag, text); });
}

CLI::Option* addTextFlag(CLI::App& command, const std::string& names, std::string* target,
                         const std::string& help) {
  return addValueFlag(command, names, help, "S", target->empty() ? "\"\"" : *target,
                      [target](const std::string& text) { *target = text; });
}

CLI::Option* addSwitch(CLI::App& command, const std::string& name, bool* target,
                       const std::string& help) {
  std::string flag = "--" + name;
  // CLI11 turns `--no-NAME` into "false" and hands `--NAME=VALUE` over as
  // VALUE; only the spellings of true and false pass on to the count below.
  auto spellsTrueOrFalse = [&command, flag](const std::string& text) {
    for (const char* word : {"true", "false", "1", "0", "yes", "no"}) {
      if (text == word) return std::string();
    }
    throw flagError(command, flag + " expects true or false, got '" + text + "'");
  };
  return command
      .add_flag_function(
          flag + ",!--no-" + name, [target](int64_t count) { *target = count > 0; },
          help + " (default: " + (*target ? "true" : "false") + ")")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->check(spellsTrueOrFalse);
}

}  // namespace strata

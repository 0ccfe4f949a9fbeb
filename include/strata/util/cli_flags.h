// Flags of the `strata` commands, declared on a CLI11 command (CLI::App).
//
// Values are read one way for all of Strata: numbers go through
// parse_number.h (the whole text, in range, whatever the C locale), not
// through CLI11's own conversion. A bad value throws FlagError naming the
// command, the flag and the text, out of the CLI11 parse. Each flag writes
// into `*target`, whose value when the flag is declared is the default that
// --help shows; the target must outlive the parse. Given twice, a flag takes
// its last value.
//
// `names` is CLI11's spelling of a flag and its aliases, e.g.
// "--nproc-per-node,--nproc_per_node"; messages name the flag by the first.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "strata/error.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace strata {

// An integer in [min, max].
CLI::Option* addIntFlag(CLI::App& command, const std::string& names, int64_t* target,
                        const std::string& help, int64_t min = std::numeric_limits<int64_t>::min(),
                        int64_t max = std::numeric_limits<int64_t>::max());
// An integer in [min, max] that stays unset unless the flag is given, for a
// flag whose default comes from elsewhere (a preset, a file); --help shows
// `unsetText` as its default.
CLI::Option* addOptionalIntFlag(CLI::App& command, const std::string& names,
                                std::optional<int64_t>* target, const std::string& help,
                                const std::string& unsetText,
                                int64_t min = std::numeric_limits<int64_t>::min(),
                                int64_t max = std::numeric_limits<int64_t>::max());
// A finite decimal number.
CLI::Option* addRealFlag(CLI::App& command, const std::string& names, double* target,
                         const std::string& help);
// A finite decimal number that stays unset unless the flag is given; --help
// shows `unsetText` as its default.
CLI::Option* addOptionalRealFlag(CLI::App& command, const std::string& names,
                                 std::optional<double>* target, const std::string& help,
                                 const std::string& unsetText);
CLI::Option* addTextFlag(CLI::App& command, const std::string& names, std::string* target,
                         const std::string& help);
// `--name` sets true; `--no-name` and `--name=false` set false (also 0 / no).
CLI::Option* addSwitch(CLI::App& command, const std::string& name, bool* target,
                       const std::string& help);

// A comma-separated flag value's items, empty ones dropped: "a.txt,,b.txt,"
// is two.
std::vector<std::string> splitList(const std::string& text);

// The words that run `command`, from the program down: "strata launch".
std::string commandName(const CLI::App& command);
// "strata launch: MESSAGE (see 'strata launch --help')".
FlagError flagError(const CLI::App& command, const std::string& message);

}  // namespace strata

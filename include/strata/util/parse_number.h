// Numbers read from text, one way for all of Strata: flags, environment
// variables, schedule text, checkpoint names. (TOML files have toml++'s own
// number syntax; see strata/util/toml.h.)
//
// Built on std::from_chars, so a result never depends on the C locale (a
// German LC_NUMERIC does not make "0.5" read as 0). Every function reads the
// WHOLE text: surrounding spaces, trailing characters ("1.5x"), an empty text
// and a value outside the type's range all give std::nullopt, never a partial
// or clamped value. A leading '+' is accepted, as strtod and TOML accept it.
// Nothing here throws or blocks: the caller turns std::nullopt into an error
// that names what it was reading (flag, key, variable or file) and the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

// An integer in `base` (2 to 36) without prefix: "42", "-3", "+7"; "ff" in base 16.
std::optional<int64_t> parseInteger(std::string_view text, int base = 10);

// parseInteger for an `int`: a value outside int's range gives std::nullopt.
std::optional<int> parseInt(std::string_view text);

// A finite decimal number: "3", "-2", "0.5", ".5", "1e-3", "2.5E+4". "nan",
// "inf" and hexadecimal floats give std::nullopt: no caller has a use for them,
// and an infinite timeout or learning rate is a typo, not a choice.
std::optional<double> parseReal(std::string_view text);

}  // namespace strata

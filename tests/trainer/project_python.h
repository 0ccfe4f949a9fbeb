// The project's Python (scripts/python-env.sh makes it, from PyPI, pinned
// and hashed by requirements/; the fixture of the tests that use it runs the
// script first), and a reference script run with it. Compiled into a test
// with STRATA_PYTHON_ENV defined as the script's path.
#pragma once

#include <string>
#include <vector>

namespace strata::train::testing {

// The python that scripts/python-env.sh prints on its last line; throws
// when the script fails.
std::string projectPython();

// `script` with `args` by projectPython(), at most `seconds`; a failed
// gtest assertion with its output when it fails or runs over.
void runPythonScript(const std::string& script, const std::vector<std::string>& args,
                     int seconds = 300);

}  // namespace strata::train::testing

// `strata launch`: parse the flags, then run the launcher (see launcher.h).
#pragma once

#include <string>
#include <vector>

namespace strata {

// Returns the process exit code: the launcher's, or 2 for bad flags.
int launchCommand(const std::vector<std::string>& args);

}  // namespace strata

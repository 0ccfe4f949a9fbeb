// `strata generate`: sample text from a training checkpoint (see generate.h).
#pragma once

#include <string>
#include <vector>

namespace strata {

// Returns 0 on success, 2 for bad flags, 1 when the checkpoint cannot be used.
int generateCommand(const std::vector<std::string>& args);

}  // namespace strata

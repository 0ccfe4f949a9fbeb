// A fresh job token (see "The job token" in docs/cli.md): 32 random bytes from
// the kernel's generator, as 64 hexadecimal digits.
//
// Blocks only until the kernel's generator is seeded (once, at boot).
// Throws SystemError when getrandom fails.
#pragma once

#include <string>

namespace strata::deploy {

std::string generateJobToken();

}  // namespace strata::deploy

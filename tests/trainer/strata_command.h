// The strata command of this build (STRATA_BINARY, set by the test target),
// run with `args` through the shell: its exit status and output, stdout and
// stderr together.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

namespace strata::train::testing {

inline std::pair<int, std::string> strata(const std::string& args) {
  std::string output;
  FILE* pipe = popen((std::string(STRATA_BINARY) + " " + args + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace strata::train::testing

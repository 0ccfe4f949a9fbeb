#include "project_python.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <stdexcept>

#include "child_process.h"

namespace strata::train::testing {

std::string projectPython() {
  static const std::string python = [] {
    std::string output;
    std::optional<ExitStatus> status = strata::testing::runToEnd(
        {"bash", STRATA_PYTHON_ENV}, strata::testing::after(std::chrono::seconds(600)), &output);
    if (!status || !status->success())
      throw std::runtime_error(std::string(STRATA_PYTHON_ENV) + " failed:\n" + output);
    std::istringstream lines(output);
    std::string line, last;
    while (std::getline(lines, line))
      if (!line.empty()) last = line;
    return last;
  }();
  return python;
}

void runPythonScript(const std::string& script, const std::vector<std::string>& args, int seconds) {
  std::vector<std::string> argv = {projectPython(), "-B", script};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string output;
  std::optional<ExitStatus> status = strata::testing::runToEnd(
      argv, strata::testing::after(std::chrono::seconds(seconds)), &output);
  ASSERT_TRUE(status.has_value()) << script << " still running after " << seconds << " s:\n"
                                  << output;
  ASSERT_TRUE(status->success()) << script << " " << status->describe() << ":\n" << output;
}

}  // namespace strata::train::testing

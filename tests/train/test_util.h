// Helpers shared by the train tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "strata/error.h"

namespace strata::train {

// Runs body, expecting an ErrorType whose message contains every part.
template <typename ErrorType = ConfigError>
void expectErrorNaming(const std::function<void()>& body, const std::vector<std::string>& parts) {
  try {
    body();
    ADD_FAILURE() << "expected an error naming " << (parts.empty() ? "" : parts.front());
  } catch (const ErrorType& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
  }
}

}  // namespace strata::train

// Argument checks shared by the generators.
#pragma once

#include <string>

#include "strata/schedule/error.h"

namespace strata::schedule {

inline void requirePositive(const char* what, int value) {
  if (value < 1) {
    throw ScheduleError(std::string(what) + " must be >= 1, got " + std::to_string(value));
  }
}

}  // namespace strata::schedule

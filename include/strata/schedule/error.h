// Errors raised by the schedule IR.
//
// Everything in strata::schedule reports bad input by throwing ScheduleError
// (a std::invalid_argument) whose message names the offending values. A
// schedule that would deadlock or break ordering throws the subclass
// ValidationError, whose message also carries the step x rank grid with the
// offending actions marked. Nothing in this library blocks or times out.
#pragma once

#include <stdexcept>
#include <string>

namespace strata::schedule {

class ScheduleError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class ValidationError : public ScheduleError {
 public:
  using ScheduleError::ScheduleError;
};

}  // namespace strata::schedule

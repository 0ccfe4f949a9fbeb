// Errors raised by the schedule IR.
//
// Everything in strata::schedule reports bad input by throwing ScheduleError
// (a strata::Error) whose message names the offending values. A
// schedule that would deadlock or break ordering throws the subclass
// ValidationError, whose message also carries the step x rank grid with the
// offending actions marked. Nothing in this library blocks or times out.
#pragma once

#include "strata/error.h"

namespace strata::schedule {

class ScheduleError : public Error {
 public:
  using Error::Error;
};

class ValidationError : public ScheduleError {
 public:
  using ScheduleError::ScheduleError;
};

}  // namespace strata::schedule

// The one exception type of the planner.
//
// Every planner function that rejects its input (an unknown preset, a bad
// value in a cluster file, a layout that does not divide the model or the
// batch, a model that fits in no layout) throws PlanError, a ConfigError.
// Its message names the offending values so that a user can fix the input
// without reading code.
#pragma once

#include "strata/error.h"

namespace strata::plan {

class PlanError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

}  // namespace strata::plan

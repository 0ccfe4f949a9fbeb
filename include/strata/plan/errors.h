// The one exception type of the planner.
//
// Every planner function that rejects its input (an unknown preset, a bad
// value in a cluster file, a layout that does not divide the model or the
// batch, a model that fits in no layout) throws PlanError. Its message names
// the offending values so that a user can fix the input without reading code.
#pragma once

#include <stdexcept>

namespace strata::plan {

class PlanError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace strata::plan

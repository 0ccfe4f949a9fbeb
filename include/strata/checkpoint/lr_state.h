// Where the learning-rate schedule stands: the optimizer steps taken. A
// checkpoint records it and the schedule (strata/train/lr_schedule.h) resumes
// from it, so it lives here, below both.
#pragma once

#include <cstdint>

namespace strata::train {

struct LrState {
  int64_t step = 0;
};

}  // namespace strata::train

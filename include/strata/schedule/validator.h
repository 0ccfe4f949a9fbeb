// Checks, before anything runs, that a schedule can run to completion.
//
// validate() throws ValidationError (error.h) for the first problem found:
// an action outside the schedule's stages or microbatches; an action on a rank
// that does not own its stage; an action listed twice; a (stage, microbatch)
// without exactly one F and either one B or one I and one W; an overlapped
// pair (schedule.h) that is not a forward followed by a full backward, or
// whose backward needs the forward it runs beside; an action listed on its
// rank before an input produced on the same rank (F before B, I before W, F of
// stage s before F of stage s + 1); and a deadlock under blocking
// point-to-point semantics, where an overlapped pair waits for the inputs of
// both its actions, reported with the cycle of waiting ranks. The message
// includes the step x rank grid with the offending actions marked.
#pragma once

#include "strata/schedule/schedule.h"

namespace strata::schedule {

void validate(const Schedule& schedule);

}  // namespace strata::schedule

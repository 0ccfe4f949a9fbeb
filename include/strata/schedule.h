// strata/schedule/: pipeline schedules as data: the action IR, the generators (GPipe, 1F1B,
// interleaved 1F1B, ZB-H1), the validator that finds deadlocks before a run,
// the simulator and the renderers. No LibTorch.
//
// Includes every public header of the folder.
#pragma once

#include "strata/schedule/action.h"
#include "strata/schedule/chrome_trace.h"
#include "strata/schedule/error.h"
#include "strata/schedule/generators.h"
#include "strata/schedule/registry.h"
#include "strata/schedule/schedule.h"
#include "strata/schedule/schedule_text.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/stash.h"
#include "strata/schedule/svg.h"
#include "strata/schedule/text_grid.h"
#include "strata/schedule/timeline.h"
#include "strata/schedule/validator.h"

// strata/launch/: `strata launch`: spawns the workers of one node, watches them, takes the
// job down naming the rank that failed, restarts within a budget.
//
// Includes every public header of the folder.
#pragma once

#include "strata/launch/launch_flags.h"
#include "strata/launch/launcher.h"
#include "strata/launch/local_job.h"

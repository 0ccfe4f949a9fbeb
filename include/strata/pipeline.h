// strata/pipeline/: pipeline parallel: stages cut by measured cost, the executor that runs a
// schedule over processes or devices, activation checkpointing, run traces.
//
// Includes every public header of the folder.
#pragma once

#include "strata/pipeline/executor.h"
#include "strata/pipeline/pipeline.h"
#include "strata/pipeline/profiler.h"
#include "strata/pipeline/split.h"
#include "strata/pipeline/stage.h"
#include "strata/pipeline/trace.h"

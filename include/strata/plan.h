// strata/plan/: the planner: model and cluster descriptions, the partitioner, the cost
// model and the layout search behind `strata plan`. No LibTorch.
//
// Includes every public header of the folder.
#pragma once

#include "strata/plan/cluster.h"
#include "strata/plan/comm.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/errors.h"
#include "strata/plan/failures.h"
#include "strata/plan/layout.h"
#include "strata/plan/measured_profile.h"
#include "strata/plan/memory.h"
#include "strata/plan/model_desc.h"
#include "strata/plan/partition.h"
#include "strata/plan/search.h"
#include "strata/plan/train_config.h"

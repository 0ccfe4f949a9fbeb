// All of Strata's public headers.
#pragma once

#include "strata/context_parallel.h"
#include "strata/data_parallel.h"
#include "strata/deploy.h"
#include "strata/error.h"
#include "strata/expert_parallel.h"
#include "strata/formats.h"
#include "strata/launch.h"
#include "strata/models.h"
#include "strata/pipeline.h"
#include "strata/plan.h"
#include "strata/runtime.h"
#include "strata/schedule.h"
#include "strata/tensor_parallel.h"
#include "strata/train.h"
#include "strata/util.h"
#include "strata/version.h"

// strata/expert_parallel/: mixture-of-experts MLPs (router, capacity,
// routing losses) and expert parallelism (experts spread over an ep group,
// tokens exchanged by all-to-all).
//
// Includes every public header of the folder.
#pragma once

#include "strata/expert_parallel/expert_parallel.h"
#include "strata/expert_parallel/moe_mlp.h"
#include "strata/expert_parallel/moe_options.h"

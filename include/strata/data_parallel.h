// strata/data_parallel/: data parallel: bucketed gradient all-reduce overlapped with backward,
// ZeRO-1/2 sharded optimizers, ZeRO-3 fully sharded parameters, the distributed sampler.
//
// Includes every public header of the folder.
#pragma once

#include "strata/data_parallel/bucket_layout.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/data_parallel/distributed_sampler.h"
#include "strata/data_parallel/flat_optimizer.h"
#include "strata/data_parallel/fully_sharded.h"
#include "strata/data_parallel/fully_sharded_optimizer.h"
#include "strata/data_parallel/replica_sync.h"
#include "strata/data_parallel/sharded_state.h"
#include "strata/data_parallel/zero_optimizer.h"

// strata/data_parallel/: data parallel: bucketed gradient all-reduce overlapped with backward,
// ZeRO-1/2 sharded optimizers, the distributed sampler.
//
// Includes every public header of the folder.
#pragma once

#include "strata/data_parallel/bucket_layout.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/data_parallel/distributed_sampler.h"
#include "strata/data_parallel/flat_optimizer.h"
#include "strata/data_parallel/replica_sync.h"
#include "strata/data_parallel/zero_optimizer.h"

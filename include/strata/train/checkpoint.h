// strata/train/checkpoint/: checkpoints: atomic files, per-rank shards with checksums, metadata
// with a tensor index that lets them load into other layouts, and their inspection.
//
// Includes every public header of the folder.
#pragma once

#include "strata/train/checkpoint/async_checkpoint.h"
#include "strata/train/checkpoint/checkpoint.h"
#include "strata/train/checkpoint/inspect.h"
#include "strata/train/checkpoint/lr_state.h"
#include "strata/train/checkpoint/tensor_index.h"

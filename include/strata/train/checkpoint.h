// strata/train/checkpoint/: checkpoints: atomic files, per-rank shards with checksums, metadata.
//
// Includes every public header of the folder.
#pragma once

#include "strata/train/checkpoint/checkpoint.h"

// strata/optim/: optimizer arithmetic shared by the trainer and the sharded
// optimizers: AdamW in one pass over memory, sums of squares for gradient
// norms.
//
// Includes every public header of the folder.
#pragma once

#include "strata/optim/adamw_update.h"
#include "strata/optim/fused_adamw.h"
#include "strata/optim/optimizer_state_key.h"
#include "strata/optim/sum_of_squares.h"

// strata/train/: the training loop: the Trainer, its LR schedule, gradient norm and
// clipping, precision, loss spikes, and the run around the steps.
//
// Includes every public header of the folder.
#pragma once

#include "strata/train/data_source.h"
#include "strata/train/device.h"
#include "strata/train/grad_norm.h"
#include "strata/train/loss_spike.h"
#include "strata/train/lr_schedule.h"
#include "strata/train/precision.h"
#include "strata/train/train_loop.h"
#include "strata/train/trainer.h"

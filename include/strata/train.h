// strata/train/: the GPT trainer, by concern: config/, data/, checkpoint/, loop/.
//
// Includes every public header of the folder.
#pragma once

#include "strata/train/checkpoint.h"
#include "strata/train/config.h"
#include "strata/train/data.h"
#include "strata/train/loop.h"

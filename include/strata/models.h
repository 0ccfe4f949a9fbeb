// strata/models/: models built from the parallel layers: the GPT.
//
// Includes every public header of the folder.
#pragma once

#include "strata/models/gpt.h"

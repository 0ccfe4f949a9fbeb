// strata/models/: model families built from the parallel layers, behind one
// interface: the GPT (and GPT-2) and the Llama family.
//
// Includes every public header of the folder.
#pragma once

#include "strata/models/gpt.h"
#include "strata/models/hugging_face.h"
#include "strata/models/llama.h"
#include "strata/models/model_family.h"

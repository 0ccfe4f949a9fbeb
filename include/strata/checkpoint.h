// strata/checkpoint/: checkpoints: atomic files, per-rank shards with checksums, metadata
// with a tensor index that lets them load into other layouts, their inspection, conversion
// between layouts, and Hugging Face weights in and out.
//
// Includes every public header of the folder.
#pragma once

#include "strata/checkpoint/async_checkpoint.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/checkpoint/checkpoint_convert.h"
#include "strata/checkpoint/dcp_convert.h"
#include "strata/checkpoint/export_hugging_face.h"
#include "strata/checkpoint/hugging_face_import.h"
#include "strata/checkpoint/inspect.h"
#include "strata/checkpoint/lr_state.h"
#include "strata/checkpoint/peft_adapter.h"
#include "strata/checkpoint/tensor_index.h"

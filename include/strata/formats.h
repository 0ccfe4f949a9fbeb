// strata/formats/: file formats shared by checkpoints, import/export and
// data: safetensors (Hugging Face's weights files), single or sharded, and
// Hugging Face's tokenizer.json and tokenizer_config.json.
//
// Includes every public header of the folder.
#pragma once

#include "strata/formats/safetensors.h"
#include "strata/formats/safetensors_set.h"
#include "strata/formats/tokenizer_config.h"
#include "strata/formats/tokenizer_json.h"

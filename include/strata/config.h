// strata/config/: a run's configuration: its schema, TOML files, command-line overrides,
// validation, the model it describes (from a Hugging Face config.json too) and its optimizer.
//
// Includes every public header of the folder.
#pragma once

#include "strata/config/config.h"
#include "strata/config/config_file.h"
#include "strata/config/elastic_layout.h"
#include "strata/config/init_from_model.h"
#include "strata/config/model_spec.h"
#include "strata/config/optimizer.h"
#include "strata/config/train_flags.h"
#include "strata/config/validate_config.h"

// strata/train/config/: the training configuration: its schema, TOML files, command-line
// overrides, validation, and the check that every rank has the same one.
//
// Includes every public header of the folder.
#pragma once

#include "strata/train/config/config.h"
#include "strata/train/config/config_file.h"
#include "strata/train/config/elastic_layout.h"
#include "strata/train/config/init_from_model.h"
#include "strata/train/config/train_flags.h"
#include "strata/train/config/validate_config.h"

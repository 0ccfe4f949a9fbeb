// strata/util/: small LibTorch-free helpers every folder uses.
//
// Includes every public header of the folder.
#pragma once

#include "strata/util/cli_flags.h"
#include "strata/util/command_line.h"
#include "strata/util/endpoint.h"
#include "strata/util/json.h"
#include "strata/util/log.h"
#include "strata/util/openblas_core.h"
#include "strata/util/parse_number.h"
#include "strata/util/progress_text.h"
#include "strata/util/random.h"
#include "strata/util/subprocess.h"
#include "strata/util/toml.h"

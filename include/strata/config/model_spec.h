// The model a training config describes, as the model families take it
// (strata/models/model_family.h): the [model] section, with the layout's
// sequence parallelism and the run's seed. Nothing blocks or throws.
#pragma once

#include "strata/config/config.h"
#include "strata/models/model_family.h"

namespace strata::train {

// The model part of a training config.
models::ModelSpec modelSpecOf(const TrainConfig& config);

// The model the trainer builds: modelSpecOf with the head's product fused
// into the loss (model_family.h), except under ZeRO-3, which releases the
// head's gathered weight when its forward returns, before the loss.
models::ModelSpec trainingModelSpecOf(const TrainConfig& config);

}  // namespace strata::train

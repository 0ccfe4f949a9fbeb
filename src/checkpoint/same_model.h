// A checkpoint resumes only the model that wrote it. Comparing the model
// section of the configurations before any tensor is read names the
// difference ("hidden 64 there, 32 here") where a shape mismatch deep in
// the load could only name a tensor. Throws CheckpointError; nothing blocks.
#pragma once

#include <string>

#include "strata/checkpoint/checkpoint.h"
#include "strata/config/config.h"

namespace strata::train {

void checkSameModel(const TrainConfig& mine, const CheckpointInfo& saved,
                    const std::string& stepDir);

// Whether every rank of this run holds the parameters that the same rank held
// when the checkpoint was written: the same pipeline layers (the cut follows
// the model's layers, pp and the virtual stages: parameter_index.h's
// layerOwners over the model's `modelLayers` pipeline layers) and, in a
// mixture-of-experts model, the same experts (the same ep). When it does not,
// a rank's own shard holds other parameters and the load must go through the
// tensor index. Throws CheckpointError for a saved configuration that does
// not parse.
bool sameHoldingsPerRank(const TrainConfig& mine, const CheckpointInfo& saved,
                         const std::string& stepDir, int modelLayers);

}  // namespace strata::train

// A checkpoint resumes only the model that wrote it. Comparing the model
// section of the configurations before any tensor is read names the
// difference ("hidden 64 there, 32 here") where a shape mismatch deep in
// the load could only name a tensor. Throws CheckpointError; nothing blocks.
#pragma once

#include <string>

#include "strata/train/checkpoint/checkpoint.h"
#include "strata/train/config/config.h"

namespace strata::train {

void checkSameModel(const TrainConfig& mine, const CheckpointInfo& saved,
                    const std::string& stepDir);

// Whether every pipeline rank of this run holds the layers that the same
// pipeline rank held when the checkpoint was written (the cut follows the
// model's layers, pp and the virtual stages: parameter_index.h's
// layerOwners over the model's `modelLayers` pipeline layers). When it does
// not, a rank's own shard holds other layers' initial values and the load
// must go through the tensor index. Throws CheckpointError for a saved
// configuration that does not parse.
bool sameLayersPerRank(const TrainConfig& mine, const CheckpointInfo& saved,
                       const std::string& stepDir, int modelLayers);

}  // namespace strata::train

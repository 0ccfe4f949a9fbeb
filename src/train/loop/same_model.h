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

}  // namespace strata::train

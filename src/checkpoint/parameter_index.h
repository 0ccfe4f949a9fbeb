// Which parameters a rank of a layout holds, as the checkpoint's tensor
// index sees them: the trainer's own rank, a rank that generation or an
// offline conversion rebuilds in one process. Builds on how Trainer cuts the
// model (parallel.stage_layers, the cut a run records, else even layer counts
// over the schedule's stages, placed as pipelineStageRanks says) and
// on each module's tp split (tensor_parallel/sharding.h). Nothing blocks.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "strata/checkpoint/checkpoint.h"
#include "strata/config/config.h"
#include "strata/runtime/layout.h"

namespace strata::train {

// The pipeline rank that trains each top-level layer of the model.
std::vector<int> layerOwners(const TrainConfig& config, int layers);

// Which of the `layers` top-level layers pipeline rank `ppRank` trains, as
// ModelFamily::build's `held`: the builder makes the others as empty shapes,
// so a rank rebuilt offline holds, and draws initial values for, its stages
// only (and the embedding and the head, model_family.h).
std::vector<bool> layersOfPipelineRank(const TrainConfig& config, int layers, int ppRank);

// The parameters pipeline rank `ppRank` trains, each once (a tied weight is
// registered twice), in the model's order.
std::vector<std::pair<std::string, at::Tensor>> stageParameters(const torch::nn::Sequential& model,
                                                                const TrainConfig& config,
                                                                int ppRank);

// `owned` (a rank's parameters by name) with their split, global shape and
// whether this copy is the indexed one, for a rank at `coord` of `tpSize`.
std::vector<IndexedParameter> indexParameters(
    const torch::nn::Module& model, const std::vector<std::pair<std::string, at::Tensor>>& owned,
    const Coord& coord, int tpSize);

}  // namespace strata::train

// A checkpoint's whole model in this one process: `strata export` writes it
// out, `strata generate` samples from it, `strata eval` measures it. Also
// Hugging Face weights' whole model, for their `--weights`.
//
// Built for one rank (pp, dp, cp, tp and ep 1, no ZeRO) and filled through
// the checkpoint's tensor index from every shard that holds a piece of a
// tensor, one shard at a time, as `strata checkpoint convert` fills a rank.
// So a checkpoint of any layout loads alike: tensor-parallel slices joined
// (the vocabulary's tp padding dropped), ZeRO's flat chunks mapped back to
// their parameters, every expert from the ep rank that held it, every layer
// from the pipeline rank or virtual stage that trained it.
//
// Reads files only. Throws CheckpointError for a shard that is missing,
// corrupt or does not fit the model.
#pragma once

#include <torch/nn/modules/container/sequential.h>

#include "checkpoint/indexed_checkpoint.h"

namespace strata::train {

// `config` with the layout of one process: what the whole model is built and
// described by.
TrainConfig oneProcessLayout(TrainConfig config);
// oneProcessLayout of the checkpoint's own config.
TrainConfig oneProcessConfig(const IndexedCheckpoint& opened);

// The whole model, in training mode, every parameter the checkpoint's.
torch::nn::Sequential loadWholeModel(const IndexedCheckpoint& opened);

// The model of Hugging Face weights (a .safetensors file, its index or their
// folder) as the config.json beside them describes it (init_from_model.h),
// in training mode, loaded as `strata train --init-from` loads a rank
// (hugging_face_import.h); `config` receives that model. Throws ConfigError
// when there is no config.json or it describes what Strata does not
// compute, SafetensorsError when the files do not fit it.
// With `adapter`, a PEFT LoRA adapter folder (peft_adapter.h), the model
// carries its adapters (config.finetune says which) and runs with them.
torch::nn::Sequential loadHuggingFaceModel(const std::string& weights, TrainConfig& config,
                                           const std::string& adapter = "");

// The model `strata generate` and `strata eval` run, in eval mode: the whole
// model of a checkpoint (the latest complete one under `checkpoint`, or that
// step directory) or of Hugging Face `weights`; exactly one of the two is
// given. `config` receives the run's configuration, its data.tokenizer the
// one to use: the run's, or with weights `tokenizer` (tokenizer.h's forms)
// or else the one in the weights' folder (tokenizerIn). Throws ConfigError
// for neither or both, a tokenizer or adapter given with a checkpoint, or
// weights without a tokenizer; otherwise as the loaders above.
torch::nn::Sequential loadInferenceModel(const std::string& checkpoint, const std::string& weights,
                                         const std::string& tokenizer, TrainConfig& config,
                                         const std::string& adapter = "");

}  // namespace strata::train

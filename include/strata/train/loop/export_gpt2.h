// `strata export`: a checkpoint of any layout as a Hugging Face GPT-2 model,
// MODEL.safetensors plus config.json in the same folder.
//
// The whole model is rebuilt in one process (tp 1, one stage) and filled
// through the checkpoint's tensor index, as `strata checkpoint convert`
// fills a rank, so a checkpoint of any pp x dp x tp, with or without ZeRO,
// exports alike; the vocabulary is the model's, without tp padding. The
// tensors get GPT-2's names and layouts (gpt2_layout.h), the head tied to
// transformer.wte.weight as GPT2LMHeadModel saves it.
//
// Throws CheckpointError for a checkpoint that is incomplete, format 1, or
// not of architecture gpt2 (its weights would mean something else in a
// GPT-2 implementation), ConfigError for a format other than safetensors.
// Nothing blocks but the file I/O.
#pragma once

#include <string>

namespace strata::train {

struct ExportOptions {
  std::string checkpoint;  // a checkpoint folder (its latest complete step) or a step directory
  std::string format = "safetensors";
  std::string out;  // MODEL.safetensors; config.json goes next to it
};

// Returns the path of the config.json written.
std::string exportCheckpoint(const ExportOptions& options);

}  // namespace strata::train

// The flags that name the model `strata generate` and `strata eval` run:
// a training checkpoint, or Hugging Face weights and their tokenizer
// (checkpoint/whole_model.h's loadInferenceModel reads them).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "strata/util/cli_flags.h"

namespace strata {

inline void addModelSourceFlags(CLI::App& command, std::string* checkpoint, std::string* weights,
                                std::string* tokenizer, std::string* adapter) {
  addTextFlag(command, "--checkpoint", checkpoint,
              "checkpoint directory (its latest complete step)");
  addTextFlag(command, "--weights", weights,
              "or Hugging Face weights: a .safetensors file, its index or their folder, with "
              "the config.json that names the model beside them");
  addTextFlag(command, "--tokenizer", tokenizer,
              "with --weights: the tokenizer, as strata train takes it (default: the one in the "
              "weights' folder)");
  addTextFlag(command, "--adapter", adapter,
              "with --weights: a PEFT LoRA adapter folder (adapter_model.safetensors and "
              "adapter_config.json) to run them with");
}

}  // namespace strata

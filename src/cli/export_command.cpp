#include "export_command.h"

#include <CLI/CLI.hpp>
#include <limits>
#include <memory>

#include "strata/checkpoint/export_hugging_face.h"
#include "strata/util/cli_flags.h"

namespace strata {

Subcommand addExportCommand(CLI::App& strata, std::ostream& out) {
  CLI::App* command = strata.add_subcommand(
      "export",
      "write a checkpoint (architecture gpt2 or llama) as a Hugging Face model in safetensors");
  command->footer(
      "  strata export --checkpoint run/checkpoints --format safetensors --out hf/model.safetensors"
      "\n  (config.json is written next to the .safetensors file; with --max-shard-mb, a larger"
      "\n  model goes into model-0000N-of-0000M.safetensors and model.safetensors.index.json)"
      "\n  strata export --checkpoint sft/checkpoints --format peft --out sft/adapter"
      "\n  (a LoRA run's adapters in PEFT's format: adapter_model.safetensors and"
      "\n  adapter_config.json; --merge-adapter writes the model with them merged in)");
  auto o = std::make_shared<train::ExportOptions>();
  auto shardMegabytes = std::make_shared<int64_t>(0);
  addTextFlag(*command, "--checkpoint", &o->checkpoint, "checkpoint folder or step folder to read")
      ->required();
  addTextFlag(*command, "--format", &o->format,
              "output format: safetensors (the model) or peft (a LoRA run's adapters)");
  addTextFlag(*command, "--out", &o->out,
              "the .safetensors file to write (peft: the folder to write into)")
      ->required();
  addSwitch(*command, "merge-adapter", &o->mergeAdapter,
            "fold a LoRA run's adapters into the weights and write a plain model");
  addIntFlag(*command, "--max-shard-mb", shardMegabytes.get(),
             "shard the weights into files of at most this many MB (0: one file)", 0,
             std::numeric_limits<int64_t>::max() / 1000000);
  return {command, [o, shardMegabytes, &out] {
            o->maxShardBytes = *shardMegabytes * 1000 * 1000;
            train::ExportedFiles files = train::exportCheckpoint(*o);
            out << "wrote";
            for (const std::string& file : files.weights) out << " " << file;
            out << " and " << files.config;
            for (const std::string& file : files.tokenizer) out << " and " << file;
            out << "\n";
            if (!files.tokenizerNotCopied.empty())
              out << "the run's tokenizer was not copied: " << files.tokenizerNotCopied << "\n";
            return 0;
          }};
}

}  // namespace strata

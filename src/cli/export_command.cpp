#include "export_command.h"

#include <CLI/CLI.hpp>
#include <memory>

#include "strata/train/loop/export_gpt2.h"
#include "strata/util/cli_flags.h"

namespace strata {

Subcommand addExportCommand(CLI::App& strata, std::ostream& out) {
  CLI::App* command = strata.add_subcommand(
      "export", "write a checkpoint (architecture gpt2) as a Hugging Face GPT-2 safetensors file");
  command->footer(
      "  strata export --checkpoint run/checkpoints --format safetensors --out hf/model.safetensors"
      "\n  (config.json is written next to the .safetensors file)");
  auto o = std::make_shared<train::ExportOptions>();
  addTextFlag(*command, "--checkpoint", &o->checkpoint, "checkpoint folder or step folder to read")
      ->required();
  addTextFlag(*command, "--format", &o->format, "output format: safetensors");
  addTextFlag(*command, "--out", &o->out, "the .safetensors file to write")->required();
  return {command, [o, &out] {
            std::string config = train::exportCheckpoint(*o);
            out << "wrote " << o->out << " and " << config << "\n";
            return 0;
          }};
}

}  // namespace strata

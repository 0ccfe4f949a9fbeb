#include "generate_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "strata/train/loop/generate.h"
#include "strata/util/cli_flags.h"

namespace strata {
namespace {

void addFlags(CLI::App& command, train::GenerateOptions& o) {
  addTextFlag(command, "--checkpoint", &o.checkpoint,
              "checkpoint directory (its latest complete step)")
      ->required();
  addTextFlag(command, "--prompt", &o.prompt, "text to continue");
  addIntFlag(command, "--tokens", &o.tokens, "tokens to generate (bytes with the byte tokenizer)",
             0);
  addRealFlag(command, "--temperature", &o.temperature, "sampling temperature; 0 is greedy");
  addIntFlag(command, "--top-k", &o.topK, "sample among the k likeliest bytes (k >= 1); unset: all",
             1);
  addIntFlag(command, "--seed", &o.seed, "sampling seed", 0);
}

}  // namespace

Subcommand addGenerateCommand(CLI::App& strata) {
  CLI::App* command =
      strata.add_subcommand("generate", "sample text from a training checkpoint (any layout)");
  command->footer(
      "  strata generate --checkpoint DIR --prompt \"the old dog\" [--temperature 0.8 --top-k 20]");
  auto options = std::make_shared<train::GenerateOptions>();
  addFlags(*command, *options);
  return {command, [options] {
            std::cout << train::generateText(*options) << std::endl;
            return 0;
          }};
}

}  // namespace strata

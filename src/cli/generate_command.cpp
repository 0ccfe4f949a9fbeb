#include "generate_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "model_source_flags.h"
#include "strata/inference/generate.h"
#include "strata/util/cli_flags.h"

namespace strata {
namespace {

void addFlags(CLI::App& command, train::GenerateOptions& o) {
  addModelSourceFlags(command, &o.checkpoint, &o.weights, &o.tokenizer, &o.adapter);
  addTextFlag(command, "--prompt", &o.prompt, "text to continue");
  addIntFlag(command, "--tokens", &o.tokens, "tokens to generate (bytes with the byte tokenizer)",
             0);
  addRealFlag(command, "--temperature", &o.sampling.temperature,
              "sampling temperature; 0 is greedy");
  addIntFlag(command, "--top-k", &o.sampling.topK,
             "sample among the k likeliest tokens (k >= 1); unset: all", 1);
  addRealFlag(command, "--top-p", &o.sampling.topP,
              "then among the fewest likeliest whose probability reaches p (0 < p <= 1); "
              "unset: all");
  addIntFlag(command, "--seed", &o.seed, "sampling seed", 0);
  addSwitch(command, "kv-cache", &o.kvCache,
            "feed the model only the new token each step, the earlier ones' keys and values "
            "cached (--no-kv-cache: the whole window each token; the text is the same)");
}

}  // namespace

Subcommand addGenerateCommand(CLI::App& strata) {
  CLI::App* command = strata.add_subcommand(
      "generate", "sample text from a training checkpoint (any layout) or Hugging Face weights");
  command->footer(
      "  strata generate --checkpoint DIR --prompt \"the old dog\" [--temperature 0.8 --top-p "
      "0.9]\n"
      "  strata generate --weights Llama-3.2-1B/ --prompt \"The capital of France is\"");
  auto options = std::make_shared<train::GenerateOptions>();
  addFlags(*command, *options);
  return {command, [options] {
            // Streamed: a long generation shows its text as it comes.
            train::generateText(*options,
                                [](const std::string& piece) { std::cout << piece << std::flush; });
            std::cout << std::endl;
            return 0;
          }};
}

}  // namespace strata

#include "data_prepare_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "strata/data/prepare.h"
#include "strata/util/cli_flags.h"
#include "strata/util/progress_text.h"

namespace strata {
namespace {

struct PrepareFlags {
  train::PrepareOptions options;
  int64_t threads = 0;
  int64_t tokenWidth = 0;
};

void addFlags(CLI::App& command, PrepareFlags& f) {
  addTextFlag(command, "--tokenizer", &f.options.tokenizer,
              "byte, a Hugging Face tokenizer.json (or a directory with one), a directory with "
              "GPT-2's encoder.json and vocab.bpe (or vocab.json and merges.txt), or a "
              "SentencePiece .model file");
  command
      .add_option("--input", f.options.inputs,
                  "text files (one document each), *.jsonl files (one document a line, its "
                  "\"text\"), or directories of them; repeat or list several")
      ->required();
  addTextFlag(command, "--output", &f.options.output, "writes PREFIX.bin and PREFIX.idx")
      ->required();
  addIntFlag(command, "--threads", &f.threads,
             "files tokenized at once (0: one per hardware thread)", 0, 4096);
  addIntFlag(command, "--token-width", &f.tokenWidth,
             "bytes per token in PREFIX.bin: 2, 4, or 0 for the smallest that fits", 0, 4);
}

}  // namespace

Subcommand addDataPrepareCommand(CLI::App& data) {
  CLI::App* command = data.add_subcommand(
      "prepare", "tokenize documents into a memory-mapped dataset (PREFIX.bin + PREFIX.idx)");
  command->allow_extras();
  command->footer(
      "  strata data prepare --tokenizer gpt2/ --input corpus/ --output data/corpus\n"
      "  strata train --tokenizer gpt2/ --vocab 50304 --data-prepared data/corpus ...");
  auto flags = std::make_shared<PrepareFlags>();
  addFlags(*command, *flags);
  return {command, [flags] {
            train::PrepareOptions options = flags->options;
            options.threads = static_cast<int>(flags->threads);
            options.tokenWidth = static_cast<int>(flags->tokenWidth);
            options.progress = &std::cerr;
            options.terminal = util::stderrIsTerminal();
            train::prepareData(options);
            return 0;
          }};
}

}  // namespace strata

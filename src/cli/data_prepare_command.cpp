#include "data_prepare_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "strata/data/prepare.h"
#include "strata/error.h"
#include "strata/util/cli_flags.h"
#include "strata/util/progress_text.h"

namespace strata {
namespace {

struct PrepareFlags {
  train::PrepareOptions options;
  int64_t threads = 0;
  int64_t tokenWidth = 0;
  int64_t maxTokens = 0;
  std::string tooLong = "drop";
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
  addSwitch(
      command, "chat", &f.options.chat,
      "the *.jsonl inputs hold conversations ({\"messages\": [...]} or {\"prompt\", "
      "\"completion\"} a "
      "line), rendered with the tokenizer folder's chat template; also writes PREFIX.mask, the "
      "assistant's tokens");
  addTextFlag(command, "--chat-template", &f.options.chatTemplate,
              "a Jinja chat template file to use instead of the tokenizer folder's");
  addTextFlag(command, "--chat-date", &f.options.chatDate,
              "YYYY-MM-DD: the date a template's strftime_now writes (default: today, as "
              "transformers does), so that the prepared data does not depend on the day");
  addIntFlag(
      command, "--max-tokens", &f.maxTokens,
      "conversations longer than this are dropped or truncated (see --too-long); 0: no limit", 0);
  addTextFlag(
      command, "--too-long", &f.tooLong,
      "drop (default) or truncate conversations longer than --max-tokens; both are counted and "
      "the first named");
}

}  // namespace

Subcommand addDataPrepareCommand(CLI::App& data) {
  CLI::App* command = data.add_subcommand(
      "prepare", "tokenize documents into a memory-mapped dataset (PREFIX.bin + PREFIX.idx)");
  command->allow_extras();
  command->footer(
      "  strata data prepare --tokenizer gpt2/ --input corpus/ --output data/corpus\n"
      "  strata train --tokenizer gpt2/ --vocab 50304 --data-prepared data/corpus ...\n"
      "  strata data prepare --chat --tokenizer llama3/ --input chats.jsonl --output data/sft "
      "--max-tokens 2048");
  auto flags = std::make_shared<PrepareFlags>();
  addFlags(*command, *flags);
  return {command, [flags] {
            train::PrepareOptions options = flags->options;
            options.threads = static_cast<int>(flags->threads);
            options.tokenWidth = static_cast<int>(flags->tokenWidth);
            options.maxTokens = flags->maxTokens;
            if (flags->tooLong != "drop" && flags->tooLong != "truncate")
              throw FlagError("strata data prepare: --too-long must be drop or truncate, not '" +
                              flags->tooLong + "' (see 'strata data prepare --help')");
            options.tooLong =
                flags->tooLong == "drop" ? train::TooLong::kDrop : train::TooLong::kTruncate;
            options.progress = &std::cerr;
            options.terminal = util::stderrIsTerminal();
            train::prepareData(options);
            return 0;
          }};
}

}  // namespace strata

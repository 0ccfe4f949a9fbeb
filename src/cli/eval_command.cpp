#include "eval_command.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "model_source_flags.h"
#include "strata/error.h"
#include "strata/inference/evaluate_chat.h"
#include "strata/inference/evaluate_text.h"
#include "strata/util/cli_flags.h"
#include "strata/util/json.h"

namespace strata {
namespace {

struct EvalFlags {
  train::EvalOptions options;
  std::string files;  // comma-separated
  train::ChatEvalOptions chat;
};

// Reports on stderr as each tenth of the `what` (windows, conversations) is done.
std::function<void(int64_t, int64_t)> progressReporter(const std::string& what) {
  auto tenthsReported = std::make_shared<int64_t>(0);
  return [tenthsReported, what](int64_t done, int64_t all) {
    int64_t tenths = done * 10 / all;
    if (tenths == *tenthsReported) return;
    *tenthsReported = tenths;
    std::cerr << "strata eval: " << done << " of " << all << " " << what << std::endl;
  };
}

void addFlags(CLI::App& command, EvalFlags& f) {
  train::EvalOptions& o = f.options;
  addModelSourceFlags(command, &o.checkpoint, &o.weights, &o.tokenizer, &o.adapter);
  addTextFlag(command, "--data-files", &f.files,
              "UTF-8 files to evaluate on, concatenated (comma-separated)");
  addTextFlag(command, "--data-prepared", &o.prepared,
              "or the PREFIX of a prepared dataset (strata data prepare): every document");
  addIntFlag(command, "--seq-len", &o.seqLen,
             "tokens each window predicts (default: the run's train.seq_len, or the context of "
             "--weights)",
             1);
  addIntFlag(command, "--batch-size", &o.batchSize, "windows per forward", 1);
  addIntFlag(command, "--windows", &o.maxWindows, "evaluate the first N windows (default: all)", 1);
  train::ChatEvalOptions& c = f.chat;
  addTextFlag(command, "--chat", &c.file,
              "or a JSONL file of conversations (as data prepare --chat reads them): how often "
              "the model gives each one's last answer exactly, and the answers' loss");
  addTextFlag(command, "--chat-template", &c.chatTemplate,
              "with --chat: a Jinja chat template file to use instead of the tokenizer's");
  addTextFlag(command, "--chat-date", &c.chatDate,
              "with --chat: YYYY-MM-DD, the date a template's strftime_now writes (default: "
              "today)");
  addIntFlag(command, "--conversations", &c.maxConversations,
             "with --chat: evaluate the first N conversations (default: all)", 1);
}

// --chat's run: exact answers and their loss.
int runChat(EvalFlags& f) {
  train::ChatEvalOptions& c = f.chat;
  const train::EvalOptions& o = f.options;
  if (!f.files.empty() || !o.prepared.empty())
    throw ConfigError(
        "--chat evaluates conversations; give it without --data-files or --data-prepared");
  c.checkpoint = o.checkpoint;
  c.weights = o.weights;
  c.tokenizer = o.tokenizer;
  c.adapter = o.adapter;
  train::ChatEvalResult r = train::evaluateChat(c, progressReporter("conversations"));
  std::cerr << "strata eval: exact answers " << r.exactMatches << " of " << r.conversations << " ("
            << std::fixed << std::setprecision(1) << 100 * r.exactMatch() << "%), answer loss "
            << std::setprecision(4) << r.answerLoss << " over " << r.answerTokens << " tokens"
            << std::endl;
  nlohmann::ordered_json line = {{"eval", o.checkpoint.empty() ? o.weights : o.checkpoint},
                                 {"chat", c.file},
                                 {"conversations", r.conversations},
                                 {"exact_matches", r.exactMatches},
                                 {"exact_match", jsonNumber(r.exactMatch())},
                                 {"answer_loss", jsonNumber(r.answerLoss)},
                                 {"answer_tokens", r.answerTokens}};
  std::cout << line.dump() << std::endl;
  return 0;
}

}  // namespace

Subcommand addEvalCommand(CLI::App& strata) {
  CLI::App* command = strata.add_subcommand(
      "eval",
      "measure the loss and perplexity of a checkpoint or Hugging Face weights on text, or how "
      "often they answer conversations exactly (--chat)");
  command->footer(
      "  strata eval --checkpoint DIR --data-files held-out.txt\n"
      "  strata eval --weights Llama-3.2-1B/ --data-prepared wiki-test --seq-len 1024\n"
      "  strata eval --weights base/ --adapter sft/adapter --chat held-out.jsonl");
  auto flags = std::make_shared<EvalFlags>();
  addFlags(*command, *flags);
  return {
      command, [flags] {
        if (!flags->chat.file.empty()) return runChat(*flags);
        flags->options.files = splitList(flags->files);
        const train::EvalOptions& o = flags->options;
        train::EvalResult r = train::evaluateText(o, progressReporter("windows"));
        std::cerr << "strata eval: loss " << std::fixed << std::setprecision(4) << r.loss
                  << ", perplexity " << std::setprecision(3) << r.perplexity << " over " << r.tokens
                  << " tokens (" << r.windows << " windows of " << r.seqLen << ")" << std::endl;
        nlohmann::ordered_json line = {{"eval", o.checkpoint.empty() ? o.weights : o.checkpoint},
                                       {"loss", jsonNumber(r.loss)},
                                       {"perplexity", jsonNumber(r.perplexity)},
                                       {"tokens", r.tokens},
                                       {"windows", r.windows},
                                       {"seq_len", r.seqLen}};
        std::cout << line.dump() << std::endl;
        return 0;
      }};
}

}  // namespace strata

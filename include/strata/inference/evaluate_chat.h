// `strata eval --chat`: how often a model gives a conversation's last
// answer exactly, and the answers' loss.
//
// Each line of the file is a conversation in strata data prepare --chat's
// formats (data/chat.h), rendered and tokenized as for training with the
// tokenizer's chat template (or the one given). Its last assistant turn is
// the answer: its content and the end-of-turn text after it (Llama 3's
// "<|eot_id|>"), so an answer that runs on is no match. The model reads
// the conversation up to that turn and the answer's tokens before each one
// (teacher forcing, one forward a conversation); the answer is an exact
// match when the likeliest next token is the answer's at every position,
// which is when greedy decoding (`strata generate --temperature 0`) would
// write it and stop. The answer loss is the mean cross-entropy over the
// answers' tokens (nats).
//
// The model loads as `strata eval`'s (a checkpoint of any layout, or
// Hugging Face weights with an optional PEFT adapter); the tokenizer must be
// a tokenizer.json (or a folder with one), as data prepare --chat needs.
//
// Reads files only. Throws ConfigError for bad options (no model, no file,
// a negative count), for what ChatEncoder refuses (file and line), and for
// a conversation longer than the model's context (file and line); and as
// the model's loaders.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace strata::train {

struct ChatEvalOptions {
  std::string checkpoint;        // a checkpoint directory, or a step directory in one
  std::string weights;           // or Hugging Face weights, as GenerateOptions has them
  std::string tokenizer;         // with weights: as GenerateOptions has it
  std::string adapter;           // with weights: as GenerateOptions has it
  std::string file;              // JSONL conversations
  std::string chatTemplate;      // a Jinja file to use instead of the tokenizer's template
  std::string chatDate;          // YYYY-MM-DD for strftime_now; "" today
  int64_t maxConversations = 0;  // evaluate the first this many; 0: all
};

struct ChatEvalResult {
  int64_t conversations = 0;
  int64_t exactMatches = 0;
  int64_t answerTokens = 0;
  double answerLoss = 0;  // mean cross-entropy an answer token, nats
  double exactMatch() const {
    return conversations > 0 ? static_cast<double>(exactMatches) / conversations : 0;
  }
};

// `progress` (optional) hears after each conversation: done, of all.
ChatEvalResult evaluateChat(const ChatEvalOptions& options,
                            const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace strata::train

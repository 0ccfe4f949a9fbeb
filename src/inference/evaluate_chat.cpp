#include "strata/inference/evaluate_chat.h"

#include <torch/torch.h>

#include <fstream>

#include "checkpoint/whole_model.h"
#include "strata/data/chat.h"
#include "strata/error.h"

namespace strata::train {
namespace {

void checkOptions(const ChatEvalOptions& o) {
  if (o.file.empty()) throw ConfigError("--chat needs a JSONL file of conversations");
  if (o.maxConversations < 0)
    throw ConfigError("--conversations must be at least 1 (or unset: all), got " +
                      std::to_string(o.maxConversations));
}

// The conversation's last assistant turn, [begin, end) of its tokens.
struct AnswerSpan {
  size_t begin = 0;
  size_t end = 0;
};

AnswerSpan lastAnswer(const ChatTokens& tokens, const std::string& where) {
  size_t end = tokens.assistant.size();
  while (end > 0 && !tokens.assistant[end - 1]) --end;
  size_t begin = end;
  while (begin > 0 && tokens.assistant[begin - 1]) --begin;
  // ChatEncoder refuses a conversation without an assistant turn; a turn
  // that opens the text has no prompt to answer.
  if (begin == 0) throw ConfigError(where + ": the answer has no prompt before it");
  return {begin, end};
}

struct Scored {
  bool exact = false;
  double lossSum = 0;  // nats, over the answer's tokens
};

// One forward of the conversation up to its answer's last token.
Scored score(torch::nn::Sequential& model, const ChatTokens& tokens, AnswerSpan answer) {
  std::vector<int64_t> ids(tokens.ids.begin(), tokens.ids.begin() + answer.end);
  at::Tensor input = torch::tensor(ids, torch::kLong).unsqueeze(0);  // [1, T]
  at::Tensor logits = model->forward(input).squeeze(1);              // [T, V]
  int64_t first = static_cast<int64_t>(answer.begin) - 1;            // predicts answer.begin
  int64_t count = static_cast<int64_t>(answer.end - answer.begin);
  at::Tensor predicting = logits.narrow(0, first, count).to(at::kFloat);  // [A, V]
  at::Tensor expected = input.squeeze(0).narrow(0, first + 1, count);     // [A]
  Scored s;
  s.exact = predicting.argmax(1).equal(expected);
  s.lossSum = torch::nn::functional::cross_entropy(
                  predicting, expected,
                  torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                  .item<double>();
  return s;
}

}  // namespace

ChatEvalResult evaluateChat(const ChatEvalOptions& o,
                            const std::function<void(int64_t, int64_t)>& progress) {
  checkOptions(o);
  // The file first: a wrong path is named before the model is read.
  std::ifstream in(o.file);
  if (!in) throw ConfigError("cannot read the conversations file '" + o.file + "'");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  TrainConfig config;
  torch::nn::Sequential model =
      loadInferenceModel(o.checkpoint, o.weights, o.tokenizer, config, o.adapter);
  ChatEncoder encoder(config.data.tokenizer, o.chatTemplate, o.chatDate);
  int64_t all = static_cast<int64_t>(lines.size());
  if (o.maxConversations > 0) all = std::min(all, o.maxConversations);
  torch::NoGradGuard noGrad;
  ChatEvalResult result;
  double lossSum = 0;
  for (int64_t i = 0; i < all; ++i) {
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = o.file + ":" + std::to_string(i + 1);
    ChatTokens tokens = encoder.encode(lines[i], where);
    AnswerSpan answer = lastAnswer(tokens, where);
    if (static_cast<int64_t>(answer.end) > config.model.context)
      throw ConfigError(where + ": the conversation up to its answer is " +
                        std::to_string(answer.end) + " tokens, beyond the model's context of " +
                        std::to_string(config.model.context));
    Scored s = score(model, tokens, answer);
    ++result.conversations;
    result.exactMatches += s.exact;
    result.answerTokens += static_cast<int64_t>(answer.end - answer.begin);
    lossSum += s.lossSum;
    if (progress) progress(i + 1, all);
  }
  if (result.conversations == 0) throw ConfigError("'" + o.file + "' holds no conversation");
  result.answerLoss = lossSum / static_cast<double>(result.answerTokens);
  return result;
}

}  // namespace strata::train

#include "strata/inference/generate.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "checkpoint/whole_model.h"
#include "inference/next_token_logits.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"

namespace strata::train {

void checkSampling(const Sampling& s) {
  std::ostringstream got;
  if (!(s.temperature >= 0) || !std::isfinite(s.temperature)) {
    got << s.temperature;
    throw ConfigError("--temperature must be a finite number >= 0 (0 is greedy), got " + got.str());
  }
  if (s.topK < 0) {
    throw ConfigError("--top-k must be at least 1 (or unset: all tokens), got " +
                      std::to_string(s.topK));
  }
  if (!(s.topP > 0 && s.topP <= 1)) {
    got << s.topP;
    throw ConfigError("--top-p must be a probability in (0, 1] (1: no cut), got " + got.str());
  }
}

int64_t sampleNextToken(const at::Tensor& logits, const Sampling& s, at::Generator& generator) {
  checkSampling(s);
  if (s.temperature == 0) return logits.argmax().item<int64_t>();
  // Exactly the k likeliest by index, not every logit >= the k-th: with ties
  // at the k-th value a threshold would let more than k tokens through.
  int64_t k = s.topK > 0 ? std::min(s.topK, logits.size(0)) : logits.size(0);
  auto [values, indices] = logits.topk(k);  // likeliest first
  at::Tensor probabilities = torch::softmax(values / s.temperature, 0);
  if (s.topP < 1) {
    // Token i stays while the likelier ones before it hold less than p.
    at::Tensor before = probabilities.cumsum(0) - probabilities;
    int64_t kept = std::max<int64_t>(1, (before < s.topP).sum().item<int64_t>());
    probabilities = probabilities.narrow(0, 0, kept);
  }
  int64_t pick = at::multinomial(probabilities, 1, false, generator).item<int64_t>();
  return indices[pick].item<int64_t>();
}

torch::nn::Sequential loadFullModel(const std::string& checkpoint, TrainConfig* config) {
  return loadInferenceModel(checkpoint, "", "", *config);
}

size_t settledLength(const std::string& text) {
  static const std::string kReplacement = "\xEF\xBF\xBD";
  size_t size = text.size();
  while (size >= 3 && text.compare(size - 3, 3, kReplacement) == 0) size -= 3;
  for (size_t back = 1; back <= 3 && back <= size; ++back) {
    auto byte = static_cast<unsigned char>(text[size - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    size_t needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
    return needed > back ? size - back : size;
  }
  return size;
}

namespace {

// Hands `onText` what `text` has grown by since `sent` went out (at the end,
// all of it). Should the tokenizer have rewritten text already sent, the
// whole text follows on a line of its own at the end.
void stream(const std::string& text, std::string& sent, bool final, const TextSink& onText) {
  if (!onText) return;
  if (text.compare(0, sent.size(), sent) != 0) {
    if (final) onText("\n" + text);
    return;
  }
  size_t ready = final ? text.size() : settledLength(text);
  if (ready <= sent.size()) return;
  onText(text.substr(sent.size(), ready - sent.size()));
  sent = text.substr(0, ready);
}

}  // namespace

std::string generateText(const GenerateOptions& o, const TextSink& onText) {
  if (o.tokens < 0)
    throw ConfigError("--tokens must not be negative, got " + std::to_string(o.tokens));
  checkSampling(o.sampling);
  TrainConfig config;
  torch::nn::Sequential model =
      loadInferenceModel(o.checkpoint, o.weights, o.tokenizer, config, o.adapter);

  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(config.data.tokenizer);
  const int64_t vocab = std::min(tokenizer->vocabSize(), config.model.vocab);
  std::vector<int64_t> ids = tokenizer->encode(o.prompt.empty() ? "\n" : o.prompt);
  // The prompt starts a document, as each training document started.
  if (std::optional<int64_t> begin = tokenizer->beginOfTextId()) ids.insert(ids.begin(), *begin);
  // A prompt that encodes to nothing (SentencePiece drops white space)
  // starts from the end of a document.
  if (ids.empty()) ids.push_back(tokenizer->endOfTextId().value_or(0));
  at::Generator generator = at::detail::createCPUGenerator(static_cast<uint64_t>(o.seed));
  torch::NoGradGuard noGrad;
  bool droppingExperts = config.model.moe.experts > 0 && config.model.moe.capacityFactor > 0;
  NextTokenLogits nextTokenLogits(model, config.model.context, o.kvCache && !droppingExperts);
  // The begin-of-text id marks where the prompt starts; it is no text.
  size_t textStart = tokenizer->beginOfTextId() && ids.front() == *tokenizer->beginOfTextId();
  auto textOf = [&] { return tokenizer->decode({ids.begin() + textStart, ids.end()}); };
  std::string sent;
  for (int64_t i = 0; i < o.tokens; ++i) {
    if (onText) stream(textOf(), sent, false, onText);
    at::Tensor last = nextTokenLogits(ids).slice(0, 0, vocab);  // the tokenizer's ids only
    int64_t next = sampleNextToken(last, o.sampling, generator);
    ids.push_back(next);
    // The model ended the document (Llama 3's <|end_of_text|>, GPT-2's
    // <|endoftext|>, SentencePiece's </s>): what follows would be another.
    if (next == tokenizer->endOfTextId()) break;
  }
  std::string text = textOf();
  stream(text, sent, true, onText);
  return text;
}

}  // namespace strata::train

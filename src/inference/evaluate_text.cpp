#include "strata/inference/evaluate_text.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "checkpoint/whole_model.h"
#include "strata/data/document_split.h"
#include "strata/data/prepared_data.h"
#include "strata/data/text_dataset.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"

namespace strata::train {
namespace {

std::string n(int64_t value) { return std::to_string(value); }

void checkOptions(const EvalOptions& o) {
  if (o.files.empty() == o.prepared.empty())
    throw ConfigError(
        "give one of --data-files (UTF-8 text) and --data-prepared (a prepared "
        "dataset's PREFIX) to evaluate on");
  if (o.seqLen < 0) throw ConfigError("--seq-len must be at least 1, got " + n(o.seqLen));
  if (o.batchSize < 1) throw ConfigError("--batch-size must be at least 1, got " + n(o.batchSize));
  if (o.maxWindows < 0)
    throw ConfigError("--windows must be at least 1 (or unset: all), got " + n(o.maxWindows));
}

int64_t sequenceLength(const EvalOptions& o, const TrainConfig& config) {
  bool fromWeights = !o.weights.empty();
  int64_t length = o.seqLen > 0  ? o.seqLen
                   : fromWeights ? config.model.context
                                 : config.train.seqLen;
  if (length > config.model.context)
    throw ConfigError("--seq-len " + n(length) + " is beyond the model's context of " +
                      n(config.model.context));
  return length;
}

WindowDataset windowsOf(const EvalOptions& o, const Tokenizer& tokenizer, int64_t seqLen) {
  if (!o.prepared.empty())
    return WindowDataset(allDocuments(openPrepared(o.prepared, tokenizer)), seqLen, o.prepared);
  std::vector<int64_t> ids = tokenizer.encode(readTextFiles(o.files));
  return WindowDataset(torch::tensor(ids, torch::kLong), seqLen, "the evaluation text");
}

}  // namespace

EvalResult evaluateText(const EvalOptions& o,
                        const std::function<void(int64_t, int64_t)>& progress) {
  checkOptions(o);
  TrainConfig config;
  torch::nn::Sequential model =
      loadInferenceModel(o.checkpoint, o.weights, o.tokenizer, config, o.adapter);
  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(config.data.tokenizer);
  EvalResult result;
  result.seqLen = sequenceLength(o, config);
  WindowDataset windows = windowsOf(o, *tokenizer, result.seqLen);
  result.windows = o.maxWindows > 0 ? std::min(o.maxWindows, windows.size()) : windows.size();
  torch::NoGradGuard noGrad;
  double summed = 0;  // cross-entropy summed over the predicted tokens
  for (int64_t first = 0; first < result.windows; first += o.batchSize) {
    std::vector<int64_t> indices(std::min(o.batchSize, result.windows - first));
    std::iota(indices.begin(), indices.end(), first);
    Batch batch = windows.gather(indices);
    at::Tensor logits = model->forward(batch.input);  // [S, B, V]
    summed += torch::nn::functional::cross_entropy(
                  logits.reshape({-1, logits.size(2)}), batch.target.t().reshape({-1}),
                  torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                  .item<double>();
    if (progress) progress(first + static_cast<int64_t>(indices.size()), result.windows);
  }
  result.tokens = result.windows * result.seqLen;
  result.loss = summed / static_cast<double>(result.tokens);
  result.perplexity = std::exp(result.loss);
  return result;
}

}  // namespace strata::train

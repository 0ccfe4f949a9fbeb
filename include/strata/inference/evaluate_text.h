// `strata eval`: the loss and perplexity of a model on text.
//
// The model is a checkpoint's of any layout or Hugging Face weights', as
// `strata generate` loads it (checkpoint/whole_model.h). The text is UTF-8
// files, concatenated and tokenised as `strata train` reads data.files, or
// a prepared dataset's tokens (prepared_data.h), every document. It is cut
// into windows as training cuts it (text_dataset.h): window i is tokens
// [i S, i S + S] and predicts the last S of them from those before, so each
// token after the first is predicted once, from at most S tokens before it;
// a tail too short for a window is left out. The loss is the mean
// next-token cross-entropy over the predicted tokens (nats), perplexity
// exp(loss).
//
// Reads files only. Throws ConfigError for bad options (neither or both of
// files and prepared, a sequence length beyond the model's context, a
// batch size or window count below 1 where given), text too short for one
// window, or a prepared dataset of another vocabulary; and as the model's
// loaders.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::train {

struct EvalOptions {
  std::string checkpoint;          // a checkpoint directory, or a step directory in one
  std::string weights;             // or Hugging Face weights, as GenerateOptions has them
  std::string tokenizer;           // with weights: as GenerateOptions has it
  std::string adapter;             // with weights: as GenerateOptions has it
  std::vector<std::string> files;  // UTF-8 text
  std::string prepared;            // or the PREFIX of a prepared dataset
  int64_t seqLen = 0;              // 0: the run's train.seq_len, or with weights the context
  int64_t batchSize = 8;           // windows per forward
  int64_t maxWindows = 0;          // evaluate the first this many; 0: all
};

struct EvalResult {
  double loss = 0;        // mean cross-entropy a token, nats
  double perplexity = 0;  // exp(loss)
  int64_t tokens = 0;     // tokens predicted
  int64_t windows = 0;
  int64_t seqLen = 0;
};

// `progress` (optional) hears after each batch: windows done, of all.
EvalResult evaluateText(const EvalOptions& options,
                        const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace strata::train

// Text generation from a training checkpoint: `strata generate`.
//
// The checkpoint may come from any layout (pp, dp, cp, tp, ep, virtual
// stages, ZeRO stage): the whole model is rebuilt in this one process and
// filled through the checkpoint's tensor index, as `strata export` fills it
// (checkpoint/whole_model.h), then sampled token by token: greedy at
// temperature 0, otherwise softmax(logits / T) restricted to the top k
// and the top p (Sampling). Each token is a forward of the new token alone, the earlier ones'
// keys and values cached, until the text outgrows the model's context.
//
// Hugging Face weights (`--weights`) are read instead as `strata train
// --init-from` reads them, the model from the config.json beside them.
//
// Reads files only. Throws CheckpointError when no complete checkpoint is
// found, it is format 1 (no tensor index), or a shard fails its checksum;
// ConfigError for bad options (neither or both of checkpoint and weights, no
// tokenizer for the weights) or weights without a config.json;
// SafetensorsError for weights that do not fit their config.json.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/nn/modules/container/sequential.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "strata/config/config.h"

namespace strata::train {

// How the next token is drawn from the logits.
struct Sampling {
  double temperature = 0;  // 0: greedy (the argmax; the cuts below do not apply)
  int64_t topK = 0;        // keep the k likeliest tokens; 0: no cut
  double topP = 1;         // then the fewest likeliest whose probability reaches p; 1: no cut
};

struct GenerateOptions {
  std::string checkpoint;  // a checkpoint directory, or a step directory in one
  // Or Hugging Face weights (a .safetensors file, its index or their folder)
  // with their config.json beside them; exactly one of the two is given.
  std::string weights;
  // With `weights`: the tokenizer (tokenizer.h's forms); "" takes the one in
  // the weights' folder (tokenizerIn: tokenizer.json, tokenizer.model, or
  // vocab.json and merges.txt). A checkpoint's run names its own.
  std::string tokenizer;
  // With `weights`: a PEFT LoRA adapter folder (checkpoint/peft_adapter.h)
  // to run them with; "" for none. A LoRA run's checkpoint holds its own.
  std::string adapter;
  std::string prompt = "\n";
  int64_t tokens = 200;  // tokens to generate (bytes with the byte tokenizer)
  Sampling sampling;
  int64_t seed = 0;
  // Feed the model only the new token each step, its attention layers
  // reading the earlier tokens' keys and values from a cache
  // (tensor_parallel/kv_cache.h); false: the whole window each token. The
  // text is the same either way. Ignored (the whole window) for experts of
  // a capacity factor: which tokens they drop depends on the whole window.
  bool kvCache = true;
};

// The whole model of the latest complete checkpoint under `checkpoint` (or of
// that step directory), reassembled for one process (tp = 1), in eval mode;
// `config` receives the run's configuration.
torch::nn::Sequential loadFullModel(const std::string& checkpoint, TrainConfig* config);

// Throws ConfigError, naming the flag, unless temperature is finite and
// >= 0, topK >= 0 and 0 < topP <= 1.
void checkSampling(const Sampling& sampling);

// One token drawn from `logits` (one row, over the vocabulary): the argmax at
// temperature 0; otherwise from softmax(logits / temperature) over exactly
// the topK likeliest tokens (all when topK is 0; ties broken by topk's
// order), then over the fewest of those, likeliest first, whose
// probabilities add up to at least topP (always the likeliest one),
// renormalised. Throws as checkSampling.
int64_t sampleNextToken(const at::Tensor& logits, const Sampling& sampling,
                        at::Generator& generator);

// How much of a growing text may be shown: a lead byte at the end whose
// continuation bytes have not come yet is held back (the next token may
// bring them), and so is a trailing U+FFFD, which a tokenizer decoding a
// character's first bytes alone writes in its place. Other invalid bytes
// pass: they are the text.
size_t settledLength(const std::string& text);

// Receives the text as it is generated, a piece at a time.
using TextSink = std::function<void(const std::string& piece)>;

// The prompt followed by the generated text. `onText` (optional) hears it
// as it grows: the prompt first, then each token's text once its UTF-8
// characters are whole; the pieces put together are the returned text
// (should a tokenizer rewrite text already handed on, the last piece is
// the whole text on a line of its own).
std::string generateText(const GenerateOptions& options, const TextSink& onText = {});

}  // namespace strata::train

// What the tests against Hugging Face's own code share
// (transformers_reference_test.cpp, peft_reference_test.cpp): the Python
// references run offline by the project's Python, the logits they write
// read back with the tests' own safetensors reader, Strata's logits of a
// trainer's layout, and the comparisons.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/inference/generate.h"
#include "strata/train/trainer.h"

namespace strata::train::testing {

// Everything is float32: the two sides differ by the order of their sums
// only, far below kTolerance, while a wrong layout, GELU or rotary
// convention moves logits of order one by far more.
constexpr double kTolerance = 1e-4;

// reference/transformers_reference.py with `args`; its output when it fails.
void runReference(const std::vector<std::string>& args);
nlohmann::json readJson(const std::string& path);
// Within kTolerance everywhere; the largest difference is printed.
void expectSameLogits(const torch::Tensor& strata, const torch::Tensor& transformers,
                      const std::string& what);
// The "logits" tensor of a safetensors file a reference wrote.
torch::Tensor logitsAt(const std::string& path);
// `ids` [b, s] as the JSON list of rows the references read.
void writeIds(const std::string& path, const torch::Tensor& ids);
// report.json's "ids" as [b, s].
torch::Tensor idsOf(const nlohmann::json& report);

// Strata's logits of `ids` in the trainer's layout on the last stage's
// ranks: this tp rank's share, [s, b, Vp / tp]; undefined elsewhere.
torch::Tensor pipelineLogits(const Trainer& trainer, const torch::Tensor& ids);
// The last stage's ranks write their share of pipelineLogits into `dir`.
void writeLogitsShare(const std::string& dir, const Trainer& trainer, const torch::Tensor& logits);
// The two tp ranks' shares written into `dir`, joined: [b, s, vocab].
torch::Tensor joinedLogits(const std::string& dir, int64_t vocab);
// `greedy` at temperature 0 with the byte tokenizer continues report.json's
// prompt with its "generated" ids, what `by` generated greedily.
void expectGreedyContinuation(GenerateOptions greedy, const nlohmann::json& report,
                              const std::string& by);

}  // namespace strata::train::testing

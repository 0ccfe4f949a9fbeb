// bench_generate: what `strata generate`'s KV cache saves.
//
// One process, one intra-op thread, a Llama of about 19M parameters (6
// blocks of 512, 8 query and 4 kv heads, context 256). It continues a
// 16-token prompt by 192 greedy tokens twice: feeding the new token alone
// with the earlier ones' keys and values cached, then the whole window
// each token (--no-kv-cache). Both must choose the same tokens.
//
//   speedup = uncached_s / cached_s
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_env.h"
#include "bench_ranks.h"
#include "inference/next_token_logits.h"
#include "strata/models/llama.h"
#include "strata/runtime/world.h"
#include "strata/util/json.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kPromptTokens = 16;
constexpr int64_t kNewTokens = 192;

strata::models::LlamaConfig benchModel() {
  strata::models::LlamaConfig c;
  c.layers = 6;
  c.hidden = 512;
  c.heads = 8;
  c.kvHeads = 4;
  c.ffn = 1376;
  c.vocab = 256;
  c.context = 256;
  return c;
}

struct Generated {
  std::vector<int64_t> ids;
  double seconds = 0;
};

Generated generateGreedy(torch::nn::Sequential& model, int64_t context, bool kvCache) {
  Generated g;
  for (int64_t i = 0; i < kPromptTokens; ++i) g.ids.push_back((i * 37 + 11) % 256);
  torch::NoGradGuard noGrad;
  auto start = Clock::now();
  strata::train::NextTokenLogits next(model, context, kvCache);
  for (int64_t i = 0; i < kNewTokens; ++i) g.ids.push_back(next(g.ids).argmax().item<int64_t>());
  g.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return g;
}

}  // namespace

int main() {
  torch::set_num_threads(1);
  auto world = strata::bench::singleProcessWorld();
  strata::models::LlamaConfig config = benchModel();
  torch::nn::Sequential model = strata::models::buildLlama(
      config, world->parallelGroups(strata::ParallelLayout(1, {1, 1, 1, 1})).tp);
  model->eval();
  std::cerr << "bench_generate: " << kNewTokens << " tokens, cached then uncached\n";
  Generated cached = generateGreedy(model, config.context, true);
  Generated uncached = generateGreedy(model, config.context, false);
  strata::bench::emitJson({{"bench", "generate"},
                           {"params", strata::models::llamaParameterCount(config)},
                           {"tokens", kNewTokens},
                           {"cached_s", strata::jsonNumber(cached.seconds)},
                           {"uncached_s", strata::jsonNumber(uncached.seconds)},
                           {"speedup", strata::jsonNumber(uncached.seconds / cached.seconds)},
                           {"same_tokens", cached.ids == uncached.ids}});
  return cached.ids == uncached.ids ? 0 : 1;
}

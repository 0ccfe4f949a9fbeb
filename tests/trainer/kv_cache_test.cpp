// Incremental decoding (strata/tensor_parallel/kv_cache.h): Strata's
// one-process GPT and Llama fed a sequence in pieces, the earlier tokens'
// keys and values read from the cache, give at every position the logits
// the independent references compute over the whole sequence at once; and
// a cache used otherwise than it allows is refused by name.
#include "strata/tensor_parallel/kv_cache.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "inference/next_token_logits.h"
#include "reference_gpt.h"
#include "reference_llama.h"
#include "strata/error.h"
#include "strata/models/gpt.h"
#include "strata/models/llama.h"
#include "strata/runtime/world.h"
#include "trainer_test_util.h"

namespace strata::testing {
namespace {

namespace tp = strata::tensor_parallel;

// Prompt of five, then single tokens around a piece of three: both the
// prefill and the steps, and a step of several tokens, whose own causal
// mask starts part-way.
const std::vector<int64_t> kPieces = {5, 1, 3, 1, 1, 1};
constexpr int64_t kLength = 12;

std::shared_ptr<Communicator> oneRankTp() {
  static std::shared_ptr<World> world = train::testing::singleProcessWorld();
  return world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1})).tp;
}

std::map<std::string, torch::Tensor> weightsOf(const torch::nn::Sequential& model) {
  std::map<std::string, torch::Tensor> weights;
  for (const auto& item : model->named_parameters()) weights[item.key()] = item.value().detach();
  return weights;
}

// ids [b, kLength] fed in kPieces through a cache -> logits [b, kLength, V].
torch::Tensor decodedInPieces(torch::nn::Sequential& model, const torch::Tensor& ids,
                              int64_t expectedLayers) {
  auto cache = std::make_shared<tp::KvCache>();
  tp::useKvCache(*model, cache);
  EXPECT_EQ(cache->layers(), expectedLayers);
  std::vector<torch::Tensor> logits;
  int64_t at = 0;
  for (int64_t piece : kPieces) {
    logits.push_back(model->forward(ids.narrow(1, at, piece)));  // [piece, b, V]
    cache->advance(piece);
    at += piece;
  }
  EXPECT_EQ(cache->position(), kLength);
  return torch::cat(logits, 0).transpose(0, 1);
}

models::LlamaConfig smallLlama() {
  models::LlamaConfig s;
  s.layers = 2;
  s.hidden = 32;
  s.heads = 4;
  s.kvHeads = 2;
  s.ffn = 48;
  s.vocab = 64;
  s.context = 16;
  // Llama 3.1's scaling, every branch turning at head dimension 8 (as
  // reference_llama_test.cpp's), so the positions after the cache's are
  // the scaled ones.
  s.ropeTheta = 500000.0;
  s.ropeScaling.type = "llama3";
  s.ropeScaling.factor = 8;
  s.ropeScaling.lowFreqFactor = 1;
  s.ropeScaling.highFreqFactor = 4;
  s.ropeScaling.originalContext = 512;
  return s;
}

ReferenceLlamaConfig referenceOf(const models::LlamaConfig& s) {
  ReferenceLlamaConfig r;
  r.layers = s.layers;
  r.hidden = s.hidden;
  r.heads = s.heads;
  r.kvHeads = s.kvHeads;
  r.ffn = s.ffn;
  r.vocab = s.vocab;
  r.ropeTheta = s.ropeTheta;
  r.ropeScaling = {s.ropeScaling.factor, s.ropeScaling.lowFreqFactor, s.ropeScaling.highFreqFactor,
                   static_cast<double>(s.ropeScaling.originalContext)};
  r.moe = {s.moe.experts, s.moe.topK, s.moe.normalizeTopK, s.moe.capacityFactor};
  r.moeEvery = s.moe.every;
  r.sharedExperts = s.moe.sharedExperts > 0;
  return r;
}

void expectLlamaDecodesAsTheReference(const models::LlamaConfig& s) {
  torch::nn::Sequential strata = models::buildLlama(s, oneRankTp());
  strata->eval();
  ReferenceLlama reference(referenceOf(s));
  reference.load(weightsOf(strata));
  torch::NoGradGuard noGrad;
  torch::manual_seed(5);
  torch::Tensor ids = torch::randint(s.vocab, {2, kLength}, torch::kLong);
  torch::Tensor whole = reference.logits(ids);  // [b, s, V]
  torch::Tensor pieces = decodedInPieces(strata, ids, s.layers);
  EXPECT_LE((pieces - whole).abs().max().item<double>(), 1e-5);
}

TEST(KvCache, LlamaDecodedInPiecesEqualsTheReference) {
  expectLlamaDecodesAsTheReference(smallLlama());
}

// Dropless experts route token by token, so a token's expert output is the
// same fed alone or with the whole sequence.
TEST(KvCache, MixtureOfExpertsLlamaDecodedInPiecesEqualsTheReference) {
  models::LlamaConfig s = smallLlama();
  s.moe.experts = 4;
  s.moe.topK = 2;
  s.moe.expertFfn = 16;
  s.moe.sharedExperts = 1;
  s.moe.every = 2;
  expectLlamaDecodesAsTheReference(s);
}

// The GPT's learned positions: the rows after the cache's.
TEST(KvCache, GptDecodedInPiecesEqualsTheReference) {
  models::GptConfig g;
  g.layers = 2;
  g.hidden = 32;
  g.heads = 4;
  g.ffn = 64;
  g.vocab = 64;
  g.context = 16;
  torch::nn::Sequential strata = models::buildGpt(g, oneRankTp());
  strata->eval();
  ReferenceGptConfig r;
  r.layers = g.layers;
  r.hidden = g.hidden;
  r.heads = g.heads;
  r.ffn = g.ffn;
  r.vocab = g.vocab;
  r.context = g.context;
  ReferenceGpt reference(r);
  reference.load(weightsOf(strata));
  torch::NoGradGuard noGrad;
  torch::manual_seed(6);
  torch::Tensor ids = torch::randint(g.vocab, {2, kLength}, torch::kLong);
  torch::Tensor whole = reference.logits(ids, 0, false);
  torch::Tensor pieces = decodedInPieces(strata, ids, g.layers);
  EXPECT_LE((pieces - whole).abs().max().item<double>(), 1e-5);
}

// Generation leaves the model as it found it: whole sequences in.
TEST(KvCache, ModelTakesWholeSequencesAgainOnceGenerationEnds) {
  models::LlamaConfig s = smallLlama();
  torch::nn::Sequential model = models::buildLlama(s, oneRankTp());
  model->eval();
  torch::NoGradGuard noGrad;
  torch::Tensor ids = torch::arange(6, torch::kLong).unsqueeze(0);
  torch::Tensor before = model->forward(ids);
  {
    train::NextTokenLogits next(model, s.context, /*kvCache=*/true);
    next({1, 2, 3});
    next({1, 2, 3, 4});
  }
  EXPECT_TRUE(torch::equal(model->forward(ids), before));
}

template <typename Call>
void expectRefused(Call&& call, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "accepted: expected an error with '" << words << "'";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(KvCache, UsesItDoesNotAllowAreRefusedByName) {
  models::LlamaConfig s = smallLlama();
  torch::nn::Sequential model = models::buildLlama(s, oneRankTp());
  model->eval();
  torch::NoGradGuard noGrad;
  auto cache = std::make_shared<tp::KvCache>();
  tp::useKvCache(*model, cache);
  torch::Tensor ids = torch::zeros({1, 3}, torch::kLong);
  model->forward(ids);
  expectRefused([&] { model->forward(ids); }, "already took this forward's tokens");
  expectRefused([&] { cache->advance(2); }, "holds 3 tokens, not the 2");
  cache->clear();
  model->forward(ids);
  cache->advance(3);
  expectRefused([&] { cache->addLayer(); }, "already holds 3 tokens");
  expectRefused(
      [&] {
        model->forward(torch::zeros({2, 1}, torch::kLong));
      },
      "holds keys of shape [1, 2, 3, 8], the new ones are [2, 2, 1, 8]");
  // Past the context: 3 cached + 14 new > 16.
  expectRefused(
      [&] {
        model->forward(torch::zeros({1, 14}, torch::kLong));
      },
      "sequence length 17 exceeds the model's context 16");
  model->train();
  expectRefused([&] { model->forward(ids); }, "for eval mode");

  // A layer split over ranks cannot decode alone.
  models::GptConfig split;
  split.layers = 1;
  split.hidden = 32;
  split.heads = 4;
  split.ffn = 64;
  split.context = 16;
  split.sequenceParallel = true;
  torch::nn::Sequential sequenceParallel = models::buildGpt(split, oneRankTp());
  expectRefused([&] { tp::useKvCache(*sequenceParallel, std::make_shared<tp::KvCache>()); },
                "split");
}

}  // namespace
}  // namespace strata::testing

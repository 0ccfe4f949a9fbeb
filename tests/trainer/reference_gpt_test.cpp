// The reference GPT checked on its own, before any test trusts it: causal
// (a later token never changes an earlier logit), untrained it predicts
// every token about equally (loss near ln V), and its dropout is seeded.
#include "reference_gpt.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strata::testing {
namespace {

ReferenceGptConfig smallGptConfig() {
  ReferenceGptConfig c;
  c.layers = 2;
  c.hidden = 32;
  c.heads = 4;
  c.ffn = 64;
  c.vocab = 256;
  c.context = 16;
  c.tiedEmbeddings = false;
  c.seed = 5;
  return c;
}

// Weights under Strata's names: matrices ~ N(0, 0.02^2), biases small,
// LayerNorms at identity.
std::map<std::string, torch::Tensor> randomWeights(const ReferenceGptConfig& c) {
  torch::manual_seed(3);
  auto normal = [](std::vector<int64_t> shape) { return torch::randn(shape) * 0.02; };
  std::map<std::string, torch::Tensor> w;
  w["embedding.tokens.weight"] = normal({c.vocab, c.hidden});
  w["embedding.positions"] = normal({c.context, c.hidden});
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string p = "block" + std::to_string(i) + ".";
    for (const char* ln : {"ln1", "ln2"}) {
      w[p + ln + ".weight"] = torch::ones({c.hidden});
      w[p + ln + ".bias"] = torch::zeros({c.hidden});
    }
    w[p + "attention.qkv.weight"] = normal({3 * c.hidden, c.hidden});
    w[p + "attention.qkv.bias"] = normal({3 * c.hidden});
    w[p + "attention.proj.weight"] = normal({c.hidden, c.hidden});
    w[p + "attention.proj.bias"] = normal({c.hidden});
    w[p + "mlp.fc1.weight"] = normal({c.ffn, c.hidden});
    w[p + "mlp.fc1.bias"] = normal({c.ffn});
    w[p + "mlp.fc2.weight"] = normal({c.hidden, c.ffn});
    w[p + "mlp.fc2.bias"] = normal({c.hidden});
  }
  w["head.norm.weight"] = torch::ones({c.hidden});
  w["head.norm.bias"] = torch::zeros({c.hidden});
  w["head.lm_head.weight"] = normal({c.vocab, c.hidden});
  return w;
}

ReferenceGpt loaded(const ReferenceGptConfig& c) {
  ReferenceGpt model(c);
  model.load(randomWeights(c));
  return model;
}

torch::Tensor randomIds(const ReferenceGptConfig& c, int64_t batch) {
  return torch::randint(c.vocab, {batch, c.context}, torch::kLong);
}

TEST(ReferenceGpt, LaterTokensNeverChangeEarlierLogits) {
  ReferenceGptConfig c = smallGptConfig();
  ReferenceGpt model = loaded(c);
  torch::NoGradGuard noGrad;
  torch::Tensor ids = randomIds(c, 2);
  torch::Tensor changed = ids.clone();
  changed.select(1, c.context - 1).fill_(0);
  changed.select(1, c.context - 2).fill_(1);
  torch::Tensor before = model.logits(ids, 0, false), after = model.logits(changed, 0, false);
  int64_t kept = c.context - 2;
  EXPECT_TRUE(torch::equal(before.narrow(1, 0, kept), after.narrow(1, 0, kept)));
  EXPECT_FALSE(torch::allclose(before.narrow(1, kept, 2), after.narrow(1, kept, 2)));
}

TEST(ReferenceGpt, UntrainedLossIsNearLogVocabulary) {
  ReferenceGptConfig c = smallGptConfig();
  ReferenceGpt model = loaded(c);
  torch::NoGradGuard noGrad;
  double loss = model.loss(randomIds(c, 8), randomIds(c, 8), 0, false).item<double>();
  EXPECT_NEAR(loss, std::log(static_cast<double>(c.vocab)), 0.05);
}

TEST(ReferenceGpt, DropoutIsSeededByCall) {
  ReferenceGptConfig c = smallGptConfig();
  c.dropout = 0.2;
  ReferenceGpt model = loaded(c);
  torch::NoGradGuard noGrad;
  torch::Tensor ids = randomIds(c, 2);
  torch::Tensor first = model.logits(ids, 7, true);
  EXPECT_TRUE(torch::equal(first, model.logits(ids, 7, true)));
  EXPECT_FALSE(torch::allclose(first, model.logits(ids, 8, true)));
  EXPECT_FALSE(torch::allclose(first, model.logits(ids, 7, false)));
}

TEST(ReferenceGpt, GivesBackTheWeightsItLoaded) {
  ReferenceGptConfig c = smallGptConfig();
  std::map<std::string, torch::Tensor> weights = randomWeights(c);
  ReferenceGpt model(c);
  model.load(weights);
  std::map<std::string, torch::Tensor> back = model.parameters();
  ASSERT_EQ(back.size(), weights.size());
  for (const auto& [name, tensor] : weights)
    EXPECT_TRUE(torch::equal(back.at(name), tensor)) << name;
}

TEST(ReferenceGpt, RefusesAWeightItDoesNotKnow) {
  ReferenceGptConfig c = smallGptConfig();
  std::map<std::string, torch::Tensor> weights = randomWeights(c);
  weights["block9.ln1.weight"] = torch::ones({c.hidden});
  ReferenceGpt model(c);
  EXPECT_THROW(model.load(weights), std::runtime_error);
}

}  // namespace
}  // namespace strata::testing

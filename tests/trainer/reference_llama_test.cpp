// The reference Llama checked on its own before any test trusts it: causal,
// untrained it predicts every token about equally (loss near ln V), rotary
// embeddings make attention scores depend on relative positions only, and
// grouped-query attention with K kv heads is multi-head attention whose k/v
// weights repeat per group. Then Strata's one-process Llama against it.
#include "reference_llama.h"

#include <gtest/gtest.h>

#include <cmath>

#include "strata/error.h"
#include "strata/models/llama.h"
#include "strata/runtime/world.h"
#include "trainer_test_util.h"

namespace strata::testing {
namespace {

ReferenceLlamaConfig smallLlamaConfig() {
  ReferenceLlamaConfig c;
  c.layers = 2;
  c.hidden = 32;
  c.heads = 4;
  c.kvHeads = 2;
  c.ffn = 48;
  c.vocab = 256;
  c.ropeTheta = 10000.0;
  return c;
}

// Weights under Strata's names: matrices ~ N(0, 0.02^2), norms near one.
std::map<std::string, torch::Tensor> randomWeights(const ReferenceLlamaConfig& c) {
  torch::manual_seed(3);
  auto normal = [](std::vector<int64_t> shape) { return torch::randn(shape) * 0.02; };
  auto norm = [&] { return 1 + normal({c.hidden}); };
  int64_t kv = c.kvHeads * (c.hidden / c.heads);
  std::map<std::string, torch::Tensor> w;
  w["embedding.tokens.weight"] = normal({c.vocab, c.hidden});
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string p = "block" + std::to_string(i) + ".";
    w[p + "attention_norm.weight"] = norm();
    w[p + "attention.q.weight"] = normal({c.hidden, c.hidden});
    w[p + "attention.k.weight"] = normal({kv, c.hidden});
    w[p + "attention.v.weight"] = normal({kv, c.hidden});
    w[p + "attention.o.weight"] = normal({c.hidden, c.hidden});
    w[p + "mlp_norm.weight"] = norm();
    w[p + "mlp.gate.weight"] = normal({c.ffn, c.hidden});
    w[p + "mlp.up.weight"] = normal({c.ffn, c.hidden});
    w[p + "mlp.down.weight"] = normal({c.hidden, c.ffn});
  }
  w["head.norm.weight"] = norm();
  w["head.lm_head.weight"] = normal({c.vocab, c.hidden});
  return w;
}

torch::Tensor randomIds(const ReferenceLlamaConfig& c, int64_t batch, int64_t s = 12) {
  return torch::randint(c.vocab, {batch, s}, torch::kLong);
}

TEST(ReferenceLlama, LaterTokensNeverChangeEarlierLogits) {
  ReferenceLlamaConfig c = smallLlamaConfig();
  ReferenceLlama model(c);
  model.load(randomWeights(c));
  torch::NoGradGuard noGrad;
  torch::Tensor ids = randomIds(c, 2);
  torch::Tensor changed = ids.clone();
  changed.select(1, 11).fill_(0);
  changed.select(1, 10).fill_(1);
  torch::Tensor before = model.logits(ids), after = model.logits(changed);
  EXPECT_TRUE(torch::equal(before.narrow(1, 0, 10), after.narrow(1, 0, 10)));
  EXPECT_FALSE(torch::allclose(before.narrow(1, 10, 2), after.narrow(1, 10, 2)));
}

TEST(ReferenceLlama, UntrainedLossIsNearLogVocabulary) {
  ReferenceLlamaConfig c = smallLlamaConfig();
  ReferenceLlama model(c);
  model.load(randomWeights(c));
  torch::NoGradGuard noGrad;
  double loss = model.loss(randomIds(c, 8), randomIds(c, 8), 0, false).item<double>();
  EXPECT_NEAR(loss, std::log(static_cast<double>(c.vocab)), 0.05);
}

// q_i . k_j after rotation depends on i - j only: the same tokens placed 37
// positions later give the same scores; without rotation the test is blind,
// so it also checks that a shift changes the rotated queries themselves.
TEST(ReferenceLlama, RotaryScoresDependOnRelativePositionOnly) {
  ReferenceLlamaConfig c = smallLlamaConfig();
  ReferenceLlama model(c);
  model.load(randomWeights(c));
  torch::NoGradGuard noGrad;
  torch::Tensor x = torch::randn({2, 9, c.hidden}, torch::kDouble).to(torch::kFloat);
  torch::Tensor at0 = model.attentionScores(0, x, 0);
  torch::Tensor at37 = model.attentionScores(0, x, 37);
  EXPECT_TRUE(torch::allclose(at0, at37, 1e-4, 1e-5)) << (at0 - at37).abs().max();
  torch::Tensor q = torch::randn({1, 2, 5, 8});
  EXPECT_FALSE(
      torch::allclose(ReferenceLlama::rotate(q, 1e4, 0), ReferenceLlama::rotate(q, 1e4, 3)));
  EXPECT_TRUE(torch::equal(ReferenceLlama::rotate(q, 1e4, 0).select(2, 0), q.select(2, 0)))
      << "position 0 turns nothing";
}

// GQA is multi-head attention whose kv weights repeat over each group.
TEST(ReferenceLlama, GroupedQueryEqualsMultiHeadWithRepeatedKv) {
  ReferenceLlamaConfig grouped = smallLlamaConfig();
  ReferenceLlamaConfig full = grouped;
  full.kvHeads = grouped.heads;
  std::map<std::string, torch::Tensor> w = randomWeights(grouped);
  std::map<std::string, torch::Tensor> repeated = w;
  int64_t d = grouped.hidden / grouped.heads, group = grouped.heads / grouped.kvHeads;
  for (int64_t i = 0; i < grouped.layers; ++i) {
    for (const char* kv : {"k", "v"}) {
      std::string name = "block" + std::to_string(i) + ".attention." + kv + ".weight";
      repeated[name] = w[name]
                           .view({grouped.kvHeads, d, grouped.hidden})
                           .repeat_interleave(group, 0)
                           .reshape({grouped.hidden, grouped.hidden});
    }
  }
  ReferenceLlama a(grouped), b(full);
  a.load(w);
  b.load(repeated);
  torch::NoGradGuard noGrad;
  torch::Tensor ids = randomIds(grouped, 2);
  EXPECT_TRUE(torch::allclose(a.logits(ids), b.logits(ids), 1e-5, 1e-6));
}

TEST(ReferenceLlama, RefusesAWeightItDoesNotKnow) {
  ReferenceLlamaConfig c = smallLlamaConfig();
  std::map<std::string, torch::Tensor> weights = randomWeights(c);
  weights["block0.attention.qkv.weight"] = torch::ones({c.hidden});
  ReferenceLlama model(c);
  EXPECT_THROW(model.load(weights), std::runtime_error);
}

// Strata's one-process Llama built from its seed, and its logits on a
// batch: with `scaling`, by the reference loaded with its weights too.
struct OneProcessLogits {
  torch::Tensor ours, theirs;
};

OneProcessLogits oneProcessLogits(const tensor_parallel::RopeScaling& scaling,
                                  const ReferenceRopeScaling& referenceScaling) {
  models::LlamaConfig s;
  s.layers = 2;
  s.hidden = 32;
  s.heads = 4;
  s.kvHeads = 2;
  s.ffn = 48;
  s.vocab = 256;
  s.context = 16;
  s.ropeTheta = 500000.0;
  s.ropeScaling = scaling;
  auto world = train::testing::singleProcessWorld();
  ParallelGroups groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  torch::nn::Sequential strata = models::buildLlama(s, groups.tp);
  std::map<std::string, torch::Tensor> weights;
  for (const auto& item : strata->named_parameters()) weights[item.key()] = item.value().detach();
  ReferenceLlamaConfig r = smallLlamaConfig();
  r.ropeTheta = s.ropeTheta;
  r.ropeScaling = referenceScaling;
  ReferenceLlama reference(r);
  reference.load(weights);
  torch::NoGradGuard noGrad;
  strata->eval();
  torch::Tensor ids = randomIds(r, 3, 16);
  return {strata->forward(ids).transpose(0, 1),  // [s, b, V] -> [b, s, V]
          reference.logits(ids)};
}

TEST(StrataLlama, OneProcessLogitsEqualTheReference) {
  OneProcessLogits logits = oneProcessLogits({}, {});
  EXPECT_LE((logits.ours - logits.theirs).abs().max().item<double>(), 1e-5);
}

// Llama 3.1's scaling at an original context of 512: head dimension 8 at
// base 500000 has wavelengths of 6.3 (kept: below 512 / 4), 167 (blended)
// and 4443 and 118000 tokens (slowed 8x: above 512 / 1), so every branch of
// the rule turns.
TEST(StrataLlama, Llama3RopeScalingLogitsEqualTheReference) {
  tensor_parallel::RopeScaling scaling;
  scaling.type = "llama3";
  scaling.factor = 8;
  scaling.lowFreqFactor = 1;
  scaling.highFreqFactor = 4;
  scaling.originalContext = 512;
  ReferenceRopeScaling reference{8, 1, 4, 512};
  OneProcessLogits scaled = oneProcessLogits(scaling, reference);
  EXPECT_LE((scaled.ours - scaled.theirs).abs().max().item<double>(), 1e-5);
  // The scaling changes the model: unscaled logits are others.
  OneProcessLogits plain = oneProcessLogits({}, {});
  EXPECT_GT((scaled.ours - plain.ours).abs().max().item<double>(), 1e-3);
}

TEST(StrataLlama, RopeScalingOtherThanLlama3OrOutOfRangeIsRefusedByName) {
  auto expectRefused = [](tensor_parallel::RopeScaling r, const std::string& words) {
    try {
      tensor_parallel::checkRopeScaling(r);
      ADD_FAILURE() << "accepted " << words;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  tensor_parallel::RopeScaling r;
  r.type = "yarn";
  expectRefused(r, "type must be none or llama3, got 'yarn'");
  r.type = "llama3";
  r.factor = 0.5;
  expectRefused(r, "factor must be >= 1, got 0.5");
  r.factor = 8;
  r.highFreqFactor = 1;
  expectRefused(r, "0 < low_freq_factor < high_freq_factor, got 1 and 1");
}

TEST(StrataLlama, RefusesShapesTpCannotSplitNamingTheValues) {
  models::LlamaConfig c;
  c.hidden = 48;
  c.heads = 6;
  c.kvHeads = 3;
  c.ffn = 96;
  auto expectRefused = [](const models::LlamaConfig& config, int tp, const std::string& words) {
    try {
      models::checkLlama(config, tp);
      ADD_FAILURE() << "accepted at tp " << tp;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expectRefused(c, 2, "kv_heads 3 can be neither split over tp 2");
  models::LlamaConfig notDividing = c;
  notDividing.kvHeads = 4;
  expectRefused(notDividing, 1, "kv_heads 4 does not divide heads 6");
  models::LlamaConfig odd = c;
  odd.hidden = 30;
  expectRefused(odd, 1, "even head dimension");
  EXPECT_NO_THROW(models::checkLlama(c, 3));  // split: one kv head a rank
  models::LlamaConfig mq = c;
  mq.kvHeads = 1;
  EXPECT_NO_THROW(models::checkLlama(mq, 6));  // replicated on all six
}

}  // namespace
}  // namespace strata::testing

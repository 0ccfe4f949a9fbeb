// The MoE MLP in real processes against the independent reference
// (tests/support/reference_moe.h): every rank of the ep group holds its share
// of the experts and its own sequences, tp splits each expert; outputs,
// input gradients, router, expert and shared-expert gradients, the routing
// losses and the tokens each expert received equal the reference's on the
// whole batch.
#include "strata/expert_parallel/moe_mlp.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "multiprocess.h"
#include "reference_moe.h"
#include "strata/runtime/world.h"
#include "strata/tensor_parallel/init.h"
#include "strata/train/precision.h"

namespace strata::expert_parallel {
namespace {

using testing::RankContext;

constexpr int64_t kHidden = 8, kLength = 6, kBatch = 4;

struct Layout {
  int ep = 1;
  int tp = 1;
};

MoeMlpOptions moeOptions(int64_t experts, double capacityFactor, int64_t shared) {
  MoeMlpOptions o;
  o.hidden = kHidden;
  o.moe.experts = experts;
  o.moe.topK = 2;
  o.moe.expertFfn = 12;
  o.moe.sharedExperts = shared;
  o.moe.auxLossCoeff = 0.1;
  o.moe.zLossCoeff = 0.01;
  o.moe.capacityFactor = capacityFactor;
  o.init.seed = 77;
  o.init.weightStd = 0.5;  // routers far from uniform, so the choice matters
  return o;
}

at::Tensor seeded(std::vector<int64_t> shape, uint64_t seed) {
  return tensor_parallel::seededNormal(shape, seed, 1.0);
}

double maxDifference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// The whole model's weights: every expert on one rank, no tp.
std::map<std::string, at::Tensor> wholeWeights(const MoeMlpOptions& options, World& world) {
  auto solo = world.newGroup("solo" + std::to_string(world.rank()), {world.rank()});
  MoeMlp whole(options, solo, std::make_shared<ExpertParallel>(nullptr, nullptr));
  std::map<std::string, at::Tensor> weights;
  for (const auto& item : whole->named_parameters())
    weights[item.key()] = item.value().detach().clone().set_requires_grad(true);
  return weights;
}

void expectEqualsReference(int worldSize, Layout layout, const MoeMlpOptions& options,
                           bool tiedRouterRows = false) {
  testing::runInProcesses(worldSize, [=](const RankContext&) {
    auto world = World::init();
    int rank = world->rank(), tpRank = rank % layout.tp, epRank = rank / layout.tp;
    std::vector<int> tpRanks, epRanks;
    for (int r = 0; r < layout.tp; ++r) tpRanks.push_back(epRank * layout.tp + r);
    for (int r = 0; r < layout.ep; ++r) epRanks.push_back(r * layout.tp + tpRank);
    auto tp = world->newGroup("tp" + std::to_string(epRank), tpRanks);
    auto ep = world->newGroup("ep" + std::to_string(tpRank), epRanks);
    std::map<std::string, at::Tensor> weights = wholeWeights(options, *world);
    if (tiedRouterRows) {
      torch::NoGradGuard noGrad;  // experts 0 and 1 always tie
      weights["router.weight"][1].copy_(weights["router.weight"][0]);
    }

    // The reference on the whole batch: sum(y G) + aux + z.
    at::Tensor x = seeded({kBatch, kLength, kHidden}, 5).set_requires_grad(true);
    at::Tensor g = seeded({kBatch, kLength, kHidden}, 6);
    testing::ReferenceMoeConfig rc{options.moe.experts, options.moe.topK, true,
                                   options.moe.capacityFactor};
    auto take = [&](const std::string& name) { return weights.at(name); };
    testing::ReferenceMoeResult ref = testing::referenceMoe(
        x,
        testing::referenceMoeWeights(take, "", options.moe.experts, options.moe.sharedExperts > 0),
        rc);
    ((ref.output * g).sum() + options.moe.auxLossCoeff * ref.balance +
     options.moe.zLossCoeff * ref.z)
        .backward();

    // Strata: this ep rank's sequences, [s, b, hidden].
    auto parallel = std::make_shared<ExpertParallel>(ep, nullptr);
    parallel->setLossScale(1.0 / layout.ep);
    MoeMlp moe(options, tp, parallel);
    {
      torch::NoGradGuard noGrad;
      if (tiedRouterRows) moe->router->weight.copy_(weights["router.weight"]);
    }
    int64_t b = kBatch / layout.ep;
    at::Tensor mine = x.detach().narrow(0, epRank * b, b).transpose(0, 1).contiguous();
    mine.set_requires_grad(true);
    at::Tensor y = moe->forward(mine);
    (y * g.narrow(0, epRank * b, b).transpose(0, 1)).sum().backward();

    EXPECT_LT(maxDifference(y, ref.output.detach().narrow(0, epRank * b, b).transpose(0, 1)), 1e-5);
    EXPECT_LT(maxDifference(mine.grad(), x.grad().narrow(0, epRank * b, b).transpose(0, 1)), 1e-5);
    for (const auto& item : moe->named_parameters()) {
      const std::string& name = item.key();
      at::Tensor grad = item.value().grad().clone();
      bool expert = name.rfind("experts.", 0) == 0;
      if (!expert) ep->allReduce(grad);  // router and shared experts: every ep rank's share
      at::Tensor expected = weights.at(name).grad();
      int64_t dim = name.find("down") != std::string::npos ? 1 : 0;
      if (name != "router.weight")
        expected = tensor_parallel::shardOf(expected, dim, tpRank, layout.tp);
      EXPECT_LT(maxDifference(grad, expected), 1e-5) << name;
    }

    std::map<int64_t, MoeLayerStats> stats = parallel->takeStats();
    ASSERT_EQ(stats.size(), 1u);
    at::Tensor counts = stats.begin()->second.tokensPerExpert.clone();
    ep->allReduce(counts);
    EXPECT_TRUE(torch::equal(counts, torch::tensor(ref.tokensPerExpert, torch::kLong)));
    at::Tensor dropped = torch::tensor({stats.begin()->second.dropped});
    ep->allReduce(dropped);
    EXPECT_EQ(dropped.item<int64_t>(), ref.dropped);
    if (options.moe.capacityFactor > 0) {
      EXPECT_GT(ref.dropped, 0);  // the capacity did drop
    }
    at::Tensor balance = torch::tensor({stats.begin()->second.auxLoss});
    ep->allReduce(balance, ReduceOp::kAvg);
    EXPECT_NEAR(balance.item<double>(), ref.balance.item<double>(), 1e-6);
  });
}

TEST(MoeMlp, OneProcessEqualsTheReference) {
  expectEqualsReference(1, {1, 1}, moeOptions(4, 0, 1));
}

TEST(MoeMlp, Ep2EqualsTheReference) { expectEqualsReference(2, {2, 1}, moeOptions(4, 0, 0)); }

TEST(MoeMlp, Ep4WithASharedExpertEqualsTheReference) {
  expectEqualsReference(4, {4, 1}, moeOptions(8, 0, 1));
}

TEST(MoeMlp, Ep2Tp2EqualsTheReference) { expectEqualsReference(4, {2, 2}, moeOptions(4, 0, 1)); }

// Capacity 0.5: most experts overflow; the same assignments dropped.
TEST(MoeMlp, CapacityDropsWhatTheReferenceDrops) {
  expectEqualsReference(2, {2, 1}, moeOptions(4, 0.5, 0));
}

// Experts 0 and 1 score alike on every token: the lower index wins.
TEST(MoeMlp, TiedScoresGoToTheLowerExpertOnEveryLayout) {
  expectEqualsReference(2, {2, 1}, moeOptions(4, 0, 0), /*tiedRouterRows=*/true);
}

// Under bf16 autocast the experts' products run in bf16 but the router
// scores in float32: every token goes to the experts it goes to in float32
// (the same counts), and the output stays within bf16's precision of it.
TEST(MoeMlp, Bf16AutocastRoutesAsFloat32) {
  testing::runInProcesses(2, [](const RankContext&) {
    auto world = World::init();
    auto solo = world->newGroup("solo" + std::to_string(world->rank()), {world->rank()});
    auto ep = world->newGroup("ep", {0, 1});
    MoeMlpOptions options = moeOptions(4, 0, 1);
    at::Tensor x = seeded({kLength, 2, kHidden}, 10 + world->rank());
    std::vector<at::Tensor> outputs, counts;
    for (const char* precision : {"fp32", "bf16"}) {
      auto parallel = std::make_shared<ExpertParallel>(ep, nullptr);
      MoeMlp moe(options, solo, parallel);
      train::PrecisionGuard guard(precision);
      outputs.push_back(moe->forward(x).to(torch::kFloat));
      counts.push_back(parallel->takeStats().begin()->second.tokensPerExpert);
    }
    EXPECT_TRUE(torch::equal(counts[0], counts[1]));
    double relative = ((outputs[1] - outputs[0]).norm() / outputs[0].norm()).item<double>();
    EXPECT_LT(relative, 2e-2);
    EXPECT_GT(relative, 0);  // bf16 did run
  });
}

}  // namespace
}  // namespace strata::expert_parallel

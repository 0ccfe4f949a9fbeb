// ZeRO-3 / FSDP trains exactly like one process on the global batch (plain
// LibTorch, training_fixture.h), for 2 and 4 replicas, with and without
// resharding after forward, with prefetch, gradient accumulation, a weight
// used by two units, parameters that forward never reaches, frozen
// parameters, and a resume from saved shards, while only a shard of every
// unit stays in memory, and units given their values one at a time (deferred
// initialisation).
#include "strata/data_parallel/fully_sharded.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "multiprocess.h"
#include "strata/data_parallel/fully_sharded_optimizer.h"
#include "strata/error.h"
#include "strata/runtime/world.h"
#include "training_fixture.h"

namespace strata::data_parallel {
namespace {

using namespace testing;
using strata::testing::RankContext;
using strata::testing::runInProcesses;

constexpr double kShardedTolerance = 1e-5;

std::vector<NamedTensor> namedOf(torch::nn::Module& module) {
  std::vector<NamedTensor> named;
  for (const auto& item : module.named_parameters()) named.push_back({item.key(), item.value()});
  return named;
}

// One unit per Linear, in registration order (the order of Mlp::parameters()).
std::vector<ShardedUnit> mlpUnits(Mlp& model) {
  std::vector<ShardedUnit> units{{"first", namedOf(*model.first)},
                                 {"second", namedOf(*model.second)},
                                 {"last", namedOf(*model.last)}};
  if (model.unused) units.push_back({"unused", namedOf(*model.unused)});
  return units;
}

torch::Tensor shardedForward(FullyShardedDataParallel& fsdp, Mlp& model, const torch::Tensor& x) {
  torch::Tensor h = fsdp.forward(0, [&] { return torch::tanh(model.first(x)); });
  h = fsdp.forward(1, [&] { return torch::tanh(model.second(h)); });
  return fsdp.forward(2, [&] { return model.last(h); });
}

double averageOverReplicas(double value, Communicator& comm) {
  torch::Tensor t = torch::full({1}, value, torch::kDouble);
  comm.allReduce(t, ReduceOp::kAvg);
  return t.item<double>();
}

struct ShardedSetup {
  FullyShardedOptions options;
  int microBatches = 1;  // per replica and step
  bool withUnused = false;
};

// Trains the fixture's Mlp for `steps` steps from step `firstStep` on; the
// model, the replica set and the optimizer live in `state` so a test can stop
// and resume.
struct ShardedRun {
  ShardedRun(Communicator& comm, const ShardedSetup& setup, std::unique_ptr<FlatOptimizer> opt)
      : model(1000 + comm.rank(), setup.withUnused),
        fsdp(mlpUnits(model), comm, setup.options),
        optimizer(fsdp, std::move(opt)),
        setup(setup) {}

  std::vector<double> train(const Dataset& data, int firstStep, int steps) {
    Communicator& comm = fsdp.comm();
    std::vector<double> losses;
    for (int step = firstStep; step < firstStep + steps; ++step) {
      optimizer.zeroGrad();
      torch::Tensor x = shardOf(data.inputs[step], comm.rank(), comm.size());
      torch::Tensor y = shardOf(data.targets[step], comm.rank(), comm.size());
      double loss = 0;
      for (int m = 0; m < setup.microBatches; ++m) {
        fsdp.setRequireSync(m == setup.microBatches - 1);
        torch::Tensor xm = shardOf(x, m, setup.microBatches);
        torch::Tensor ym = shardOf(y, m, setup.microBatches);
        // Mean over the replica's rows: each micro-batch's share of it.
        torch::Tensor l = torch::mse_loss(shardedForward(fsdp, model, xm), ym) / setup.microBatches;
        l.backward();
        loss += l.item<double>();
      }
      optimizer.step();
      losses.push_back(averageOverReplicas(loss, comm));
      // Only the shards stay: every unit released after the step.
      EXPECT_EQ(fsdp.gatheredBytes(), 0);
    }
    return losses;
  }

  Mlp model;
  FullyShardedDataParallel fsdp;
  FullyShardedOptimizer optimizer;
  ShardedSetup setup;
};

void expectMatches(const TrainResult& serial, const std::vector<double>& losses,
                   const std::vector<torch::Tensor>& params, const std::string& what) {
  ASSERT_EQ(losses.size(), serial.losses.size()) << what;
  for (size_t i = 0; i < losses.size(); ++i) {
    EXPECT_NEAR(losses[i], serial.losses[i], kShardedTolerance) << what << ", step " << i;
  }
  EXPECT_LE(maxDifference(serial.params, params), kShardedTolerance) << what;
}

void checkShardedMatchesSerial(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Dataset data = makeDataset();
  Mlp adamModel(1000, false), sgdModel(1000, false);
  TrainResult serialAdam = trainSerial(adamModel, data, adamW());
  TrainResult serialSgd = trainSerial(sgdModel, data, sgdMomentum());
  for (bool reshard : {true, false}) {
    for (int prefetch : {0, 1, 2}) {
      ShardedSetup setup;
      setup.options.reshardAfterForward = reshard;
      setup.options.prefetch = prefetch;
      std::string what = std::string("reshard ") + (reshard ? "on" : "off") + ", prefetch " +
                         std::to_string(prefetch);
      ShardedRun adam(comm, setup, flatAdamW());
      std::vector<double> losses = adam.train(data, 0, kSteps);
      expectMatches(serialAdam, losses, adam.fsdp.fullParameters(), what + ", AdamW");
      ShardedRun sgd(comm, setup, flatSgdMomentum());
      losses = sgd.train(data, 0, kSteps);
      expectMatches(serialSgd, losses, sgd.fsdp.fullParameters(), what + ", SGD");
      // Resharding, at most the unit computing and `prefetch` more are
      // gathered at once; without, every unit stays until the step's sync.
      int64_t largest = 16 * 16 + 16 + comm.size();  // `second`, padded at most this far
      int64_t bound = reshard ? (1 + prefetch) * largest : 4 * largest;
      EXPECT_LE(adam.fsdp.peakGatheredBytes(), 4 * bound) << what;  // float32
      // Beyond its parameter and gradient shards, resharding holds the
      // running unit and its full gradient (never with the reduce-scatter
      // buffer besides), and per prefetched unit one more gathered and one
      // reduce-scatter in flight.
      if (reshard) {
        int64_t shards = 0;
        for (int u = 0; u < adam.fsdp.numUnits(); ++u) shards += adam.fsdp.shard(u).numel();
        int64_t held = 2 * shards + 2 * largest + prefetch * (2 * largest + largest / comm.size());
        EXPECT_LE(adam.fsdp.peakHeldBytes(), 4 * held) << what;
      }
    }
  }
}

TEST(FullySharded, TwoReplicasMatchSerial) { runInProcesses(2, checkShardedMatchesSerial); }
TEST(FullySharded, FourReplicasMatchSerial) { runInProcesses(4, checkShardedMatchesSerial); }

void checkShardsOnly(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Mlp model(3, false);
  FullyShardedDataParallel fsdp(mlpUnits(model), comm);
  int64_t held = 0, total = 0;
  for (int u = 0; u < fsdp.numUnits(); ++u) {
    held += fsdp.shard(u).numel();
    total += fsdp.layout(u).totalNumel();
    for (const NamedTensor& p : fsdp.unit(u).parameters) {
      EXPECT_EQ(p.tensor.storage().nbytes(), 0u) << p.name << " still holds its memory";
    }
    // No gradient shard before the first reduce-scatter.
    EXPECT_EQ(fsdp.gradientShard(u).storage().nbytes(), 0u) << fsdp.unit(u).name;
  }
  EXPECT_EQ(held * comm.size(), total);
}

TEST(FullySharded, OnlyShardsStayInMemory) { runInProcesses(2, checkShardsOnly); }

// Deferred initialisation: the units arrive as placeholders of the right
// shape (a zero seen through zero strides), and initUnit gives each its
// values just before it is sharded: the units before it are shards already,
// those after it still placeholders, so one unit is whole at a time.
void checkDeferredInitialisation(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Mlp values(3, false), model(4, false);
  torch::NoGradGuard noGrad;
  for (at::Tensor p : model.parameters()) p.set_(torch::zeros({1}).expand(p.sizes()));
  std::vector<ShardedUnit> units = mlpUnits(model), sources = mlpUnits(values);
  std::vector<int> order;
  FullyShardedOptions options;
  options.initUnit = [&](int u, const ShardedUnit& unit) {
    order.push_back(u);
    for (int other = 0; other < static_cast<int>(units.size()); ++other) {
      for (const NamedTensor& p : units[other].parameters) {
        bool placeholder = p.tensor.storage().nbytes() == sizeof(float);
        bool shard = p.tensor.storage().nbytes() == 0;
        EXPECT_TRUE(other < u ? shard : placeholder) << "unit " << u << ": " << p.name;
      }
    }
    for (size_t i = 0; i < unit.parameters.size(); ++i) {
      at::Tensor target = unit.parameters[i].tensor;
      target.set_(sources[u].parameters[i].tensor.detach().clone());
    }
  };
  FullyShardedDataParallel fsdp(units, comm, options);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  std::vector<at::Tensor> whole = fsdp.fullParameters();
  std::vector<at::Tensor> expected = values.parameters();
  ASSERT_EQ(whole.size(), expected.size());
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_TRUE(torch::equal(whole[i], expected[i])) << i;
}

TEST(FullySharded, DeferredInitialisationHoldsOneUnitAtATime) {
  runInProcesses(2, checkDeferredInitialisation);
}

void checkAccumulation(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Dataset data = makeDataset();
  Mlp serialModel(1000, false);
  TrainResult serial = trainSerial(serialModel, data, adamW());
  for (bool reshard : {true, false}) {
    ShardedSetup setup;
    setup.microBatches = 4;
    setup.options.reshardAfterForward = reshard;
    ShardedRun run(comm, setup, flatAdamW());
    std::vector<double> losses = run.train(data, 0, kSteps);
    expectMatches(serial, losses, run.fsdp.fullParameters(),
                  std::string("4 micro-batches, reshard ") + (reshard ? "on" : "off"));
  }
}

TEST(FullySharded, GradientAccumulationMatchesSerial) { runInProcesses(2, checkAccumulation); }

void checkUnusedParameters(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Dataset data = makeDataset();
  // LibTorch's AdamW skips a parameter without gradient: `unused` keeps still.
  Mlp serialModel(1000, true);
  TrainResult serial = trainSerial(serialModel, data, adamW());
  ShardedSetup setup;
  setup.withUnused = true;
  setup.options.unusedParameters = UnusedParameters::kTreatAsZero;
  ShardedRun run(comm, setup, flatAdamW());
  std::vector<double> losses = run.train(data, 0, kSteps);
  expectMatches(serial, losses, run.fsdp.fullParameters(), "unused layer");
  EXPECT_FALSE(run.fsdp.isUsed(3, 0));
  EXPECT_TRUE(run.fsdp.isUsed(2, 0));

  // By default, every rank alike names what no rank reached.
  setup.options.unusedParameters = UnusedParameters::kError;
  ShardedRun strict(comm, setup, flatAdamW());
  try {
    strict.train(data, 0, 1);
    ADD_FAILURE() << "no error for a layer forward never calls";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'weight'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kTreatAsZero"), std::string::npos) << e.what();
  }
}

TEST(FullySharded, UnusedParametersKeepStill) { runInProcesses(2, checkUnusedParameters); }

// Embedding E [vocab, dim] read at the input and reused as the output head:
// logits = tanh(Linear(E[x])) E^T.
constexpr int64_t kVocab = 11;
constexpr int64_t kDim = 8;
constexpr int64_t kTokens = 8;  // per replica and step, divisible by 2 and 4 replicas

struct TiedModel : torch::nn::Module {
  explicit TiedModel(uint64_t seed) {
    torch::manual_seed(seed);
    embedding = register_module("embedding", torch::nn::Embedding(kVocab, kDim));
    hidden = register_module("hidden", torch::nn::Linear(kDim, kDim));
  }
  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear hidden{nullptr};
};

// Tokens [kSteps, 2 * kTokens] and next tokens alike.
std::pair<torch::Tensor, torch::Tensor> tiedData() {
  torch::manual_seed(5);
  return {torch::randint(kVocab, {kSteps, 2 * kTokens}),
          torch::randint(kVocab, {kSteps, 2 * kTokens})};
}

torch::Tensor tiedForward(TiedModel& m, const torch::Tensor& tokens) {
  torch::Tensor h = torch::tanh(m.hidden(m.embedding(tokens)));  // [tokens, dim]
  return torch::matmul(h, m.embedding->weight.t());              // [tokens, vocab]
}

void checkTiedEmbedding(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  auto [inputs, targets] = tiedData();
  // Reference: one process, plain LibTorch.
  TiedModel serial(21);
  auto reference = adamW()(serial.parameters());
  std::vector<double> serialLosses;
  for (int step = 0; step < kSteps; ++step) {
    reference->zero_grad();
    torch::Tensor loss =
        torch::cross_entropy_loss(tiedForward(serial, inputs[step]), targets[step]);
    loss.backward();
    reference->step();
    serialLosses.push_back(loss.item<double>());
  }

  TiedModel model(21 + comm.rank());
  FullyShardedDataParallel fsdp(
      {{"embedding", namedOf(*model.embedding)}, {"hidden", namedOf(*model.hidden)}}, comm);
  FullyShardedOptimizer optimizer(fsdp, flatAdamW());
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zeroGrad();
    torch::Tensor x = shardOf(inputs[step], comm.rank(), comm.size());
    torch::Tensor y = shardOf(targets[step], comm.rank(), comm.size());
    torch::Tensor e = fsdp.forward(0, [&] { return model.embedding(x); });
    torch::Tensor h = fsdp.forward(1, [&] { return torch::tanh(model.hidden(e)); });
    // The embedding's unit again, for the head.
    torch::Tensor logits =
        fsdp.forward(0, [&] { return torch::matmul(h, model.embedding->weight.t()); });
    torch::Tensor loss = torch::cross_entropy_loss(logits, y);
    loss.backward();
    optimizer.step();
    EXPECT_NEAR(averageOverReplicas(loss.item<double>(), comm), serialLosses[step],
                kShardedTolerance)
        << "step " << step;
  }
  std::vector<torch::Tensor> expected;
  for (const torch::Tensor& p : serial.parameters()) expected.push_back(p.detach());
  EXPECT_LE(maxDifference(expected, fsdp.fullParameters()), kShardedTolerance);
}

TEST(FullySharded, TiedEmbeddingMatchesSerial) { runInProcesses(2, checkTiedEmbedding); }
TEST(FullySharded, TiedEmbeddingFourReplicas) { runInProcesses(4, checkTiedEmbedding); }

// Frozen parameters (a base under LoRA) share units with trained ones, and
// one unit is frozen whole: the trained ones train as one process does with
// the same parameters frozen, the frozen ones keep their values, and each
// unit's frozen parameters are released as soon as its backward has passed
// its input, before the backward goes on.
void freezeBase(Mlp& model) {
  model.first->weight.set_requires_grad(false);
  model.second->weight.set_requires_grad(false);
  model.second->bias.set_requires_grad(false);
}

int64_t paddedNumel(const std::vector<at::Tensor>& tensors, int shards) {
  int64_t numel = 0;
  for (const at::Tensor& t : tensors) numel += t.numel();
  return (numel + shards - 1) / shards * shards;
}

void checkFrozenParameters(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Dataset data = makeDataset();
  Mlp serialModel(1000, false);
  freezeBase(serialModel);
  TrainResult serial = trainSerial(serialModel, data, adamW());
  for (bool reshard : {true, false}) {
    std::string what = std::string("reshard ") + (reshard ? "on" : "off");
    Mlp model(1000 + comm.rank(), false);
    freezeBase(model);
    std::vector<ShardedUnit> units{
        {"first", {{"bias", model.first->bias}}, {{"weight", model.first->weight}}},
        {"second", {}, namedOf(*model.second)},
        {"last", namedOf(*model.last)}};
    FullyShardedOptions options;
    options.reshardAfterForward = reshard;
    FullyShardedDataParallel fsdp(units, comm, options);
    FullyShardedOptimizer optimizer(fsdp, flatAdamW());
    // Once unit 1's backward has passed its input, only unit 0 is gathered.
    int64_t firstUnit = paddedNumel({model.first->bias}, comm.size()) +
                        paddedNumel({model.first->weight}, comm.size());
    std::vector<double> losses;
    for (int step = 0; step < kSteps; ++step) {
      optimizer.zeroGrad();
      torch::Tensor x = shardOf(data.inputs[step], comm.rank(), comm.size());
      torch::Tensor y = shardOf(data.targets[step], comm.rank(), comm.size());
      auto layer = [](torch::nn::Linear& linear) {
        return [&linear](const torch::Tensor& in) { return torch::tanh(linear(in)); };
      };
      torch::Tensor h0 = fsdp.forward(0, x, layer(model.first));
      int64_t gatheredThen = -1;
      h0.register_hook([&](const torch::Tensor&) { gatheredThen = fsdp.gatheredBytes(); });
      torch::Tensor h1 = fsdp.forward(1, h0, layer(model.second));
      torch::Tensor out =
          fsdp.forward(2, h1, [&](const torch::Tensor& in) { return model.last(in); });
      torch::Tensor loss = torch::mse_loss(out, y);
      loss.backward();
      EXPECT_EQ(gatheredThen, 4 * firstUnit) << what << ", step " << step;  // float32
      // Every unit released by the end of backward, frozen parts included.
      EXPECT_EQ(fsdp.gatheredBytes(), 0) << what << ", step " << step;
      optimizer.step();
      losses.push_back(averageOverReplicas(loss.item<double>(), comm));
    }
    fsdp.gatherAll();
    expectMatches(serial, losses, snapshot(model), what);
    fsdp.reshard();
  }
}

TEST(FullySharded, FrozenParametersShardedUntrained) { runInProcesses(2, checkFrozenParameters); }

// A unit's frozen parameters of two dtypes (a bf16 weight beside a float32
// scale, as a bf16 base beside its norms) take a flat buffer each: both are
// gathered for the unit and released after its backward, unchanged, while
// its trained bias trains as one process does with the same frozen values.
torch::Tensor scaledLayer(const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& scale, const torch::Tensor& bias) {
  return torch::tanh(torch::linear(x, weight.to(torch::kFloat)) * scale + bias);
}

void checkFrozenOfTwoDtypes(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Dataset data = makeDataset();
  at::Generator generator = at::detail::createCPUGenerator(5);
  const torch::Tensor weight =
      torch::randn({kOutputs, kInputs}, generator).to(torch::kBFloat16);  // [3, 6]
  const torch::Tensor scale = torch::rand({kOutputs}, generator) + 0.5;   // [3]

  torch::Tensor serialBias = torch::zeros({kOutputs}).requires_grad_();
  std::unique_ptr<torch::optim::Optimizer> reference = adamW()({serialBias});
  std::vector<double> serialLosses;
  for (int step = 0; step < kSteps; ++step) {
    reference->zero_grad();
    torch::Tensor loss = torch::mse_loss(scaledLayer(data.inputs[step], weight, scale, serialBias),
                                         data.targets[step]);
    loss.backward();
    reference->step();
    serialLosses.push_back(loss.item<double>());
  }

  torch::Tensor w = weight.clone(), s = scale.clone();
  torch::Tensor bias = torch::zeros({kOutputs}).requires_grad_();
  FullyShardedDataParallel fsdp({{"layer", {{"bias", bias}}, {{"weight", w}, {"scale", s}}}}, comm);
  FullyShardedOptimizer optimizer(fsdp, flatAdamW());
  const int64_t gathered = 2 * paddedNumel({w}, comm.size()) + 4 * paddedNumel({s}, comm.size()) +
                           4 * paddedNumel({bias}, comm.size());
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zeroGrad();
    torch::Tensor x = shardOf(data.inputs[step], comm.rank(), comm.size());
    torch::Tensor y = shardOf(data.targets[step], comm.rank(), comm.size());
    int64_t gatheredThen = -1;
    torch::Tensor out = fsdp.forward(0, x, [&](const torch::Tensor& in) {
      gatheredThen = fsdp.gatheredBytes();
      return scaledLayer(in, w, s, bias);
    });
    torch::Tensor loss = torch::mse_loss(out, y);
    loss.backward();
    optimizer.step();
    EXPECT_EQ(gatheredThen, gathered) << "step " << step;
    EXPECT_EQ(fsdp.gatheredBytes(), 0) << "step " << step;
    EXPECT_NEAR(averageOverReplicas(loss.item<double>(), comm), serialLosses[step],
                kShardedTolerance)
        << "step " << step;
  }
  std::vector<torch::Tensor> full = fsdp.fullParameters();  // bias, weight, scale
  ASSERT_EQ(full.size(), 3u);
  EXPECT_LE(maxDifference({serialBias.detach()}, {full[0]}), kShardedTolerance);
  EXPECT_EQ(full[1].scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(full[1], weight));
  EXPECT_TRUE(torch::equal(full[2], scale));
}

TEST(FullySharded, FrozenParametersOfTwoDtypes) { runInProcesses(2, checkFrozenOfTwoDtypes); }

// Two steps, then the shards and optimizer state go into a fresh replica set
// (other initial weights) that trains the last three: bit for bit the
// uninterrupted run.
void checkResume(const RankContext&) {
  auto world = World::init();
  Communicator& comm = world->comm();
  Dataset data = makeDataset();
  ShardedSetup setup;
  ShardedRun whole(comm, setup, flatAdamW());
  std::vector<double> wholeLosses = whole.train(data, 0, kSteps);

  ShardedRun first(comm, setup, flatAdamW());
  first.train(data, 0, 2);
  std::vector<torch::Tensor> shards;
  for (int u = 0; u < first.fsdp.numUnits(); ++u) shards.push_back(first.fsdp.shard(u).clone());
  std::vector<NamedTensor> state;
  for (const NamedTensor& item : first.optimizer.saveState())
    state.push_back({item.name, item.tensor.clone()});

  ShardedRun resumed(comm, setup, flatAdamW());
  for (int u = 0; u < resumed.fsdp.numUnits(); ++u) resumed.fsdp.shard(u).copy_(shards[u]);
  resumed.optimizer.loadState(state);
  std::vector<double> losses = resumed.train(data, 2, kSteps - 2);
  for (size_t i = 0; i < losses.size(); ++i) EXPECT_EQ(losses[i], wholeLosses[i + 2]) << i;
  std::vector<torch::Tensor> a = whole.fsdp.fullParameters(), b = resumed.fsdp.fullParameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

TEST(FullySharded, ResumeIsBitExact) { runInProcesses(2, checkResume); }

// Every check fails before any collective, so one rank suffices.
void checkBadUnits(const RankContext&) {
  Mlp model(1, false);
  auto expectConfigError = [](const std::function<void()>& build, const std::string& needle) {
    try {
      build();
      ADD_FAILURE() << "no error, expected one containing '" << needle << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto world = World::init();
  Communicator& comm = world->comm();
  expectConfigError([&] { FullyShardedDataParallel({}, comm); }, "at least one unit");
  expectConfigError([&] { FullyShardedDataParallel({{"empty", {}}}, comm); }, "'empty'");
  expectConfigError(
      [&] {
        FullyShardedDataParallel({{"a", namedOf(*model.first)}, {"b", namedOf(*model.first)}},
                                 comm);
      },
      "appears twice");
  Mlp frozen(1, false);
  freezeBase(frozen);
  expectConfigError(
      [&] {
        FullyShardedDataParallel({{"a", namedOf(*frozen.second)}}, comm);
      },
      "parameter 'weight' of fully sharded unit 'a' does not require grad");
  expectConfigError(
      [&] {
        FullyShardedDataParallel({{"a", {}, namedOf(*model.first)}}, comm);
      },
      "frozen parameter 'weight' of fully sharded unit 'a' requires grad");
  torch::Tensor half = torch::zeros({4}, torch::kBFloat16).requires_grad_();
  expectConfigError(
      [&] {
        FullyShardedDataParallel({{"a", {{"bias", model.first->bias}, {"half", half}}}}, comm);
      },
      "one dtype for every parameter: 'bias' is Float but parameter 'half'");
  FullyShardedOptions negative;
  negative.prefetch = -1;
  expectConfigError([&] { FullyShardedDataParallel(mlpUnits(model), comm, negative); },
                    "prefetch -1");
}

TEST(FullySharded, RejectsBadUnits) { runInProcesses(1, checkBadUnits); }

}  // namespace
}  // namespace strata::data_parallel

// Parallel equals serial, end to end: the Trainer over a pp x dp x tp layout
// trains exactly what the independent reference (reference_training.h, plain
// LibTorch, none of Strata's layers) trains from the same weights and data.
//
// Compared after kSteps steps: every step's loss and global gradient norm
// (the norm sees a gradient's scale, which AdamW and clipping would hide),
// the validation loss after the last step, and every parameter of every rank — each tp shard of
// each stage of each replica against its slice of the reference tensor. The tolerance is 1e-5
// relative in float32, per tensor as
// ||got - expected|| / ||expected||: the parallel run sums the same numbers
// in another order (tp all-reduces, dp averages, micro-batches), which moves
// the last bits. A norm rather than the largest entry, because AdamW divides
// each gradient by its own running magnitude: an entry whose gradient is
// near zero turns rounding noise into a step of up to the learning rate
// (measured over the layouts below: single entries up to 4e-5 relative,
// every tensor's norm within 5e-6, every loss within 1e-7).
//
// One part is not compared: the key bias of attention. Adding a constant
// vector to every key adds the same number to every score of a query's row,
// which softmax ignores, so its gradient is zero in exact arithmetic and
// nothing but rounding noise, which AdamW amplifies to steps of the learning
// rate on both sides alike.
#include <gtest/gtest.h>

#include <set>

#include "reference_training.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/sharding.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

constexpr int kSteps = 4;
constexpr double kTolerance = 1e-5;

TrainConfig layout(int64_t pp, int64_t dp, int64_t tp, const std::string& schedule,
                   bool tiedEmbeddings) {
  TrainConfig c = tinyConfig();
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.schedule = schedule;
  c.model.tiedEmbeddings = tiedEmbeddings;
  return c;
}

double relativeDifference(const torch::Tensor& got, const torch::Tensor& expected) {
  double scale = expected.norm().item<double>();
  double difference = (got - expected).norm().item<double>();
  return scale > 0 ? difference / scale : difference;
}

// A fused QKV bias ([heads, 3 (q, k, v), d] entries, or a tp shard of them)
// with the key entries set to zero.
torch::Tensor withoutKeyBias(const torch::Tensor& bias, int64_t headDim) {
  torch::Tensor copy = bias.clone();
  copy.view({-1, 3, headDim}).select(1, 1).zero_();
  return copy;
}

bool isQkvBias(const std::string& name) {
  const std::string suffix = "attention.qkv.bias";
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The slice of the reference tensor a rank holds: the vocabulary padded with
// zero rows to a multiple of tp (models/gpt.h), then its tp part.
torch::Tensor expectedShard(const torch::Tensor& full, const ParameterShard& shard,
                            const SavedShards& saved) {
  torch::Tensor expected = full;
  bool vocabulary = shard.name == "embedding.tokens.weight" || shard.name == "head.lm_head.weight";
  if (vocabulary)
    expected = tensor_parallel::padRows(
        full, tensor_parallel::paddedToMultiple(full.size(0), saved.tpSize));
  if (shard.shardDim == tensor_parallel::kReplicated) return expected;
  int64_t part = expected.size(shard.shardDim) / saved.tpSize;
  return expected.narrow(shard.shardDim, part * saved.tpRank, part);
}

// What a rank records: kSteps losses, kSteps gradient norms, then the
// validation loss after them.
std::vector<double> trainAndRecord(Trainer& trainer) {
  std::vector<double> losses, norms;
  for (int i = 0; i < kSteps; ++i) {
    StepReport report = trainer.step();
    losses.push_back(report.loss);
    norms.push_back(report.gradNorm);
  }
  losses.insert(losses.end(), norms.begin(), norms.end());
  losses.push_back(trainer.evaluate(1));
  return losses;
}

void expectRecordMatches(const std::vector<double>& got, const ReferenceRun& reference, int rank) {
  ASSERT_EQ(got.size(), static_cast<size_t>(2 * kSteps + 1))
      << "rank " << rank << " recorded too little";
  for (int i = 0; i < kSteps; ++i) {
    EXPECT_NEAR(got[i], reference.losses[i], kTolerance * reference.losses[i])
        << "rank " << rank << ", loss of step " << i + 1;
    EXPECT_NEAR(got[kSteps + i], reference.gradNorms[i], kTolerance * reference.gradNorms[i])
        << "rank " << rank << ", gradient norm of step " << i + 1;
  }
  EXPECT_NEAR(got[2 * kSteps], reference.validationLoss, kTolerance * reference.validationLoss)
      << "rank " << rank << ", validation loss after step " << kSteps;
}

// Checks every shard of the rank; returns the names it held.
std::set<std::string> expectShardsMatch(const SavedShards& saved, const ReferenceRun& reference,
                                        int64_t headDim, int rank) {
  std::set<std::string> held;
  for (const ParameterShard& shard : saved.shards) {
    held.insert(shard.name);
    auto full = reference.parameters.find(shard.name);
    if (full == reference.parameters.end()) {
      ADD_FAILURE() << "rank " << rank << " holds " << shard.name << ", which the reference lacks";
      continue;
    }
    torch::Tensor expected = expectedShard(full->second, shard, saved);
    if (!expected.sizes().equals(shard.tensor.sizes())) {
      ADD_FAILURE() << "rank " << rank << ", " << shard.name << ": shape " << shard.tensor.sizes()
                    << ", expected " << expected.sizes();
      continue;
    }
    torch::Tensor got = shard.tensor;
    if (isQkvBias(shard.name)) {
      got = withoutKeyBias(got, headDim);
      expected = withoutKeyBias(expected, headDim);
    }
    EXPECT_LE(relativeDifference(got, expected), kTolerance)
        << "rank " << rank << ", parameter " << shard.name << " after step " << kSteps;
  }
  return held;
}

void expectEqualsReference(const std::string& name, const TrainConfig& config) {
  int processes = static_cast<int>(config.parallel.pp * config.parallel.dp * config.parallel.tp);
  std::string dir = sharedDir(name);
  strata::testing::runInProcesses(
      processes,
      [&](const strata::testing::RankContext& ctx) {
        Trainer trainer(config, World::init());
        writeValues(dir, "record", ctx.rank, trainAndRecord(trainer));
        writeShards(dir, ctx.rank, trainer);
      },
      sharedDirOptions(dir));

  ReferenceRun reference = trainReference(config, kSteps);
  // Equal numbers only mean something when training moves them.
  ASSERT_LT(reference.losses[kSteps - 1], reference.losses[0] - 0.01)
      << "the reference does not learn";
  std::set<std::string> held;
  for (int rank = 0; rank < processes; ++rank) {
    expectRecordMatches(readValues(dir, "record", rank), reference, rank);
    int64_t headDim = config.model.hidden / config.model.heads;
    for (const std::string& n : expectShardsMatch(readShards(dir, rank), reference, headDim, rank))
      held.insert(n);
  }
  for (const auto& [parameter, tensor] : reference.parameters)
    EXPECT_TRUE(held.count(parameter)) << "no rank holds " << parameter;
  removeSharedDir(dir);
}

// The Trainer itself, one process: its GPT, loss, clipping, AdamW and
// schedule against the reference.
TEST(TrainerEqualsReference, OneProcess) {
  expectEqualsReference("serial", layout(1, 1, 1, "1f1b", true));
}

TEST(TrainerEqualsReference, OneProcessUntiedWithDropout) {
  TrainConfig config = layout(1, 1, 1, "1f1b", false);
  config.model.dropout = 0.1;
  expectEqualsReference("serialdropout", config);
}

// All three dimensions at once, 8 processes.
TEST(TrainerEqualsReference, Pp2Dp2Tp2OneFOneB) {
  expectEqualsReference("pp2dp2tp2", layout(2, 2, 2, "1f1b", true));
}

// Zero-bubble H1 splits each backward into B (input gradient) and W (weight
// gradient), which must still add up to the same gradients, and its W
// actions must reach data parallelism's hooks.
TEST(TrainerEqualsReference, Pp2Dp2Tp2ZbH1) {
  expectEqualsReference("pp2dp2tp2zb", layout(2, 2, 2, "zb-h1", false));
}

// Interleaved 1F1B: two model chunks per pipeline rank (virtual stages).
TEST(TrainerEqualsReference, Pp2Dp2Interleaved) {
  TrainConfig config = layout(2, 2, 1, "interleaved-1f1b", true);
  config.parallel.virtualStages = 2;
  expectEqualsReference("pp2dp2interleaved", config);
}

// The tied embedding lives on the first and the last stage; the trainer sums
// its two gradients. Vocab-parallel embedding and head over tp.
TEST(TrainerEqualsReference, Pp2Tp2TiedGpipe) {
  expectEqualsReference("pp2tp2gpipe", layout(2, 1, 2, "gpipe", true));
}

// Sequence parallel: LayerNorms, dropout and residuals on half the sequence.
TEST(TrainerEqualsReference, Pp2Tp2SequenceParallel) {
  TrainConfig config = layout(2, 1, 2, "1f1b", false);
  config.parallel.sequenceParallel = true;
  expectEqualsReference("pp2tp2sp", config);
}

TEST(TrainerEqualsReference, Tp2Dp2) {
  expectEqualsReference("tp2dp2", layout(1, 2, 2, "1f1b", true));
}

// ZeRO-1: each dp rank updates only its shard of the AdamW state, here
// under a pipeline too.
TEST(TrainerEqualsReference, Pp2Dp2Zero1) {
  TrainConfig config = layout(2, 2, 1, "1f1b", true);
  config.parallel.zero = 1;
  expectEqualsReference("pp2dp2zero", config);
}

// ZeRO-2: each dp rank keeps only its chunks of the averaged gradients, so
// clipping measures chunks; the tied embedding keeps whole gradients.
TEST(TrainerEqualsReference, Pp2Dp2Zero2) {
  TrainConfig config = layout(2, 2, 1, "1f1b", true);
  config.parallel.zero = 2;
  expectEqualsReference("pp2dp2zero2", config);
}

TEST(TrainerEqualsReference, Pp2Dp2Tp2Zero2ZbH1) {
  TrainConfig config = layout(2, 2, 2, "zb-h1", false);
  config.parallel.zero = 2;
  expectEqualsReference("pp2dp2tp2zero2", config);
}

TEST(TrainerEqualsReference, Tp2Dp2Zero1) {
  TrainConfig config = layout(1, 2, 2, "1f1b", true);
  config.parallel.zero = 1;
  expectEqualsReference("tp2dp2zero", config);
}

// Dropout in every dimension: replicas draw the masks of the micro-batches
// they hold, tp ranks the masks of their heads and rows; activation
// checkpointing recomputes with the same masks.
TEST(TrainerEqualsReference, Pp2Dp2Tp2DropoutCheckpointedSequenceParallel) {
  TrainConfig config = layout(2, 2, 2, "1f1b", true);
  config.model.dropout = 0.1;
  config.parallel.checkpointActivations = true;
  config.parallel.sequenceParallel = true;
  expectEqualsReference("pp2dp2tp2dropout", config);
}

TEST(TrainerEqualsReference, Dp2Tp2DropoutCheckpointed) {
  TrainConfig config = layout(1, 2, 2, "1f1b", false);
  config.model.dropout = 0.1;
  config.parallel.checkpointActivations = true;
  expectEqualsReference("dp2tp2dropout", config);
}

// A vocabulary tp does not divide is padded: zero rows in the embedding (and
// the untied head), padding logits masked, so the model is the unpadded one.
TEST(TrainerEqualsReference, Tp2Dp2OddVocabularyTied) {
  TrainConfig config = layout(1, 2, 2, "1f1b", true);
  config.model.vocab = 257;
  expectEqualsReference("tp2oddvocab", config);
}

TEST(TrainerEqualsReference, Pp2Tp2OddVocabularyUntied) {
  TrainConfig config = layout(2, 1, 2, "gpipe", false);
  config.model.vocab = 259;
  expectEqualsReference("pp2tp2oddvocab", config);
}

}  // namespace
}  // namespace strata::train::testing

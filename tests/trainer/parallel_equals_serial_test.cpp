// Parallel equals serial, end to end: the Trainer over a pp x dp x tp layout
// trains exactly what the independent reference (reference_training.h, plain
// LibTorch, none of Strata's layers) trains from the same weights and data.
//
// Compared after kComparedSteps steps: every step's loss and global gradient
// norm (the norm sees a gradient's scale, which AdamW and clipping would
// hide), the validation loss after the last step, and every parameter of
// every rank — each tp shard of each stage of each replica against its slice
// of the reference tensor (reference_comparison.h states the tolerance).
#include <gtest/gtest.h>

#include "reference_comparison.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

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

// Seven layers (embedding, 5 blocks, head) over 5 stages: cut unevenly.
// Seed 2: with the default seed one entry of block3.ln2.bias gets a gradient
// so near zero that AdamW turns its rounding into a 1.7e-6 step difference
// (every other entry within 1e-10), the case reference_comparison.h names.
TEST(TrainerEqualsReference, Pp5SevenLayersOneFOneB) {
  TrainConfig config = layout(5, 1, 1, "1f1b", true);
  config.model.layers = 5;
  config.train.seed = 2;
  expectEqualsReference("pp5", config);
}

// An explicit uneven cut: the embedding alone on stage 0.
TEST(TrainerEqualsReference, Pp2Tp2StageLayersOneAndFive) {
  TrainConfig config = layout(2, 1, 2, "1f1b", true);
  config.parallel.stageLayers = {1, 5};
  expectEqualsReference("pp2tp2cut15", config);
}

// A measured cut (TrainerBalancedCut), with dropout: the profile runs
// without it and draws nothing from the random generators, so the masks are
// the reference's.
TEST(TrainerEqualsReference, Pp2Dp2BalancedCutWithDropout) {
  TrainConfig config = layout(2, 2, 1, "1f1b", true);
  config.parallel.partition = "balanced";
  config.model.dropout = 0.1;
  expectEqualsReference("pp2dp2balanced", config);
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

// GPT-2's architecture (tanh GELU, tied head) with the reference's own
// tanh formula, over a pipeline and tensor parallel.
TEST(TrainerEqualsReference, Pp2Tp2Gpt2Architecture) {
  TrainConfig config = layout(2, 1, 2, "1f1b", true);
  config.model.architecture = kGpt2Architecture;
  expectEqualsReference("pp2tp2gpt2", config);
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

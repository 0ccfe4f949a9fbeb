// Parallel equals serial for the Llama family: the Trainer over pp x dp x tp
// layouts trains exactly what the independent reference Llama
// (tests/support/reference_llama.h, plain LibTorch) trains from the same
// weights and data: every step's loss and gradient norm, the validation loss
// and every parameter shard (reference_comparison.h states the tolerance).
//
// Grouped-query attention splits or replicates kv heads over tp
// (tensor_parallel/grouped_query_attention.h); both ways are here: kv heads
// 2 at tp 2 split, kv heads 2 at tp 4 and kv heads 1 at tp 2 and 4
// replicated, their gradients summed over the ranks that share them.
#include <gtest/gtest.h>

#include "reference_comparison.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

TrainConfig llama(int64_t pp, int64_t dp, int64_t tp, int64_t kvHeads,
                  const std::string& schedule = "1f1b") {
  TrainConfig c = tinyLlamaConfig(kvHeads);
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.schedule = schedule;
  return c;
}

TEST(LlamaEqualsReference, OneProcessGroupedQuery) {
  expectEqualsReference("llama_serial", llama(1, 1, 1, 2));
}

TEST(LlamaEqualsReference, OneProcessMultiQueryTied) {
  TrainConfig config = llama(1, 1, 1, 1);
  config.model.tiedEmbeddings = true;
  expectEqualsReference("llama_serial_mq", config);
}

// All three dimensions, kv heads split over tp.
TEST(LlamaEqualsReference, Pp2Dp2Tp2OneFOneB) {
  expectEqualsReference("llama_pp2dp2tp2", llama(2, 2, 2, 2));
}

// Zero-bubble H1 with the one kv head replicated over tp 2.
TEST(LlamaEqualsReference, Pp2Dp2Tp2ZbH1MultiQuery) {
  expectEqualsReference("llama_pp2dp2tp2zb", llama(2, 2, 2, 1, "zb-h1"));
}

TEST(LlamaEqualsReference, Pp2Dp2Interleaved) {
  TrainConfig config = llama(2, 2, 1, 2, "interleaved-1f1b");
  config.parallel.virtualStages = 2;
  expectEqualsReference("llama_pp2dp2interleaved", config);
}

// Sequence parallel: RMSNorms and residuals on half the sequence, the
// replicated kv head's weights summed over tp.
TEST(LlamaEqualsReference, Pp2Tp2SequenceParallelMultiQuery) {
  TrainConfig config = llama(2, 1, 2, 1);
  config.parallel.sequenceParallel = true;
  expectEqualsReference("llama_pp2tp2sp", config);
}

TEST(LlamaEqualsReference, Pp2Dp2Zero1) {
  TrainConfig config = llama(2, 2, 1, 2);
  config.parallel.zero = 1;
  expectEqualsReference("llama_pp2dp2zero1", config);
}

TEST(LlamaEqualsReference, Pp2Dp2Zero2) {
  TrainConfig config = llama(2, 2, 1, 2);
  config.parallel.zero = 2;
  expectEqualsReference("llama_pp2dp2zero2", config);
}

TEST(LlamaEqualsReference, Tp2Dp2Zero3) {
  TrainConfig config = llama(1, 2, 2, 2);
  config.parallel.zero = 3;
  expectEqualsReference("llama_tp2dp2zero3", config);
}

// Each of the two kv heads on two tp ranks; activation checkpointing.
TEST(LlamaEqualsReference, Tp4GroupedQueryReplicatedCheckpointed) {
  TrainConfig config = llama(1, 1, 4, 2);
  config.parallel.checkpointActivations = true;
  expectEqualsReference("llama_tp4kv2", config);
}

// One kv head on all four ranks, and a vocabulary tp does not divide.
TEST(LlamaEqualsReference, Tp4MultiQueryOddVocabulary) {
  TrainConfig config = llama(1, 1, 4, 1);
  config.model.vocab = 258;
  expectEqualsReference("llama_tp4kv1", config);
}

}  // namespace
}  // namespace strata::train::testing

// Packed documents (data.pack) in every layout the documents reach
// differently: one process (the fused head loss), pipeline with tensor
// parallelism and data parallelism, ZeRO-3 with activation checkpointing
// (under GPipe, so the recompute must select its own micro-batch's
// documents again), context
// parallelism by ring and by all-to-all (each rank holds part of each
// document), a Llama under tensor and sequence parallelism (rotary
// positions restart per document) and a pipeline with checkpointing. Each
// equals the independent reference (reference_training.h), which runs
// every document of every window through the model alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "data/token_file_writer.h"
#include "multiprocess.h"
#include "reference_comparison.h"
#include "strata/util/random.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

namespace fs = std::filesystem;

// 300 documents of 1 to 23 byte-vocabulary tokens (windows of 16 hold
// several whole, padded where the next does not fit, and those longer than
// 17 tokens are cut), each a run of random
// tokens and then "abcd" cycled from a random letter, which the model
// learns within the compared steps. With `masked`, the random run is a
// prompt outside the loss mask. Written once, by the parent.
std::string packedDataset(const std::string& name, bool masked) {
  const fs::path folder = fs::temp_directory_path() / ("strata-packing-" + name);
  const std::string prefix = (folder / "docs").string();
  if (strata::testing::inRankProcess()) return prefix;
  fs::remove_all(folder);
  util::SplitMix64 random(20261207);
  TokenFileWriter writer(prefix, 2, 256, masked);
  for (int d = 0; d < 300; ++d) {
    const int64_t length = 1 + static_cast<int64_t>(random.below(23));
    const int64_t prompt = static_cast<int64_t>(random.below(static_cast<uint64_t>(length)));
    const int64_t letter = static_cast<int64_t>(random.below(4));
    std::vector<int64_t> ids;
    std::vector<uint8_t> mask;
    for (int64_t t = 0; t < length; ++t) {
      ids.push_back(t < prompt ? static_cast<int64_t>(random.below(256))
                               : 'a' + (letter + t - prompt) % 4);
      mask.push_back(t >= prompt ? 1 : 0);
    }
    writer.append(ids);
    if (masked) writer.appendLossMask(mask);
  }
  writer.finish();
  return prefix;
}

TrainConfig packed(TrainConfig c, const std::string& name, bool masked = false) {
  c.data.prepared = packedDataset(name, masked);
  c.data.tokenizer = "byte";
  c.data.validationFraction = 0.25;
  c.data.pack = true;
  return c;
}

TEST(PackingEqualsReference, OneProcessFusedHeadLoss) {
  expectEqualsReference("packserial", packed(tinyConfig(), "serial"));
}

TEST(PackingEqualsReference, OneProcessSplitAcrossWindows) {
  TrainConfig c = packed(tinyConfig(), "split");
  c.data.splitAcrossWindows = true;
  expectEqualsReference("packsplit", c);
}

TEST(PackingEqualsReference, WithALossMask) {
  expectEqualsReference("packmask", packed(tinyConfig(), "masked", /*masked=*/true));
}

TEST(PackingEqualsReference, Pp2Tp2Dp2OneFOneB) {
  expectEqualsReference("packpp2tp2dp2", packed(withLayout(tinyConfig(), 2, 2, 1, 2), "pp2tp2dp2"));
}

// GPipe: every forward before the first backward, so each recompute comes
// after other micro-batches' forwards and must select its own again.
TEST(PackingEqualsReference, Dp2Zero3ActivationCheckpointingGpipe) {
  TrainConfig c = withLayout(tinyConfig(), 1, 2, 1, 1);
  c.parallel.zero = 3;
  c.parallel.checkpointActivations = true;
  c.parallel.schedule = "gpipe";
  expectEqualsReference("packz3", packed(c, "zero3"));
}

TEST(PackingEqualsReference, Cp2Dp2Ring) {
  expectEqualsReference("packcp2dp2", packed(withLayout(tinyConfig(), 1, 2, 2, 1), "cp2dp2"));
}

TEST(PackingEqualsReference, LlamaCp2AllToAll) {
  TrainConfig c = withLayout(tinyLlamaConfig(2), 1, 1, 2, 1);
  c.parallel.cpAlgorithm = "all-to-all";
  expectEqualsReference("packllcp2a2a", packed(c, "llamacp2a2a"));
}

TEST(PackingEqualsReference, LlamaCp2Ring) {
  expectEqualsReference("packllcp2",
                        packed(withLayout(tinyLlamaConfig(2), 1, 1, 2, 1), "llamacp2ring"));
}

TEST(PackingEqualsReference, LlamaPp2Tp2SequenceParallelCheckpointing) {
  TrainConfig c = withLayout(tinyLlamaConfig(2), 2, 1, 1, 2);
  c.parallel.sequenceParallel = true;
  c.parallel.checkpointActivations = true;
  expectEqualsReference("packllpp2tp2", packed(c, "llamapp2tp2"));
}

}  // namespace
}  // namespace strata::train::testing

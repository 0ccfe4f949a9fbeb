// A loss mask (data.loss_on = "assistant", a dataset prepared with a mask)
// in the layouts the loss passes through differently: the fused head loss
// (one process, pipeline with tensor parallelism, a Llama), the unfused one
// (ZeRO-3), and context parallelism (each rank holds part of each sequence,
// so of its counted targets). Each equals the independent reference
// (reference_training.h), which sums the plain cross-entropy over the
// counted targets and divides by their count in the whole global batch.
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

// 240 documents of 20 to 59 byte-vocabulary tokens, each a "prompt" of
// random tokens (not counted) and an "answer" (counted) of at least 5
// tokens that cycles through "abcd", which the model learns within the
// compared steps; written once, by the parent (the ranks read it).
std::string maskedDataset(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("strata-loss-mask-" + name);
  const std::string prefix = (folder / "sft").string();
  if (strata::testing::inRankProcess()) return prefix;
  fs::remove_all(folder);
  util::SplitMix64 random(20261207);
  TokenFileWriter writer(prefix, 2, 256, /*lossMask=*/true);
  for (int d = 0; d < 240; ++d) {
    const int64_t length = 20 + static_cast<int64_t>(random.below(40));
    const int64_t prompt =
        5 + static_cast<int64_t>(random.below(static_cast<uint64_t>(length - 10)));
    std::vector<int64_t> ids;
    std::vector<uint8_t> mask;
    for (int64_t t = 0; t < length; ++t) {
      ids.push_back(t < prompt ? static_cast<int64_t>(random.below(256)) : 'a' + (t - prompt) % 4);
      mask.push_back(t >= prompt ? 1 : 0);
    }
    writer.append(ids);
    writer.appendLossMask(mask);
  }
  writer.finish();
  return prefix;
}

TrainConfig masked(TrainConfig c, const std::string& name) {
  c.data.prepared = maskedDataset(name);
  c.data.tokenizer = "byte";
  c.data.validationFraction = 0.25;
  c.data.lossOn = "assistant";
  return c;
}

TEST(LossMaskEqualsReference, OneProcessFusedHeadLoss) {
  expectEqualsReference("maskserial", masked(tinyConfig(), "serial"));
}

TEST(LossMaskEqualsReference, Pp2Tp2Dp2OneFOneB) {
  expectEqualsReference("maskpp2tp2dp2", masked(withLayout(tinyConfig(), 2, 2, 1, 2), "pp2tp2dp2"));
}

TEST(LossMaskEqualsReference, Dp2Zero3UnfusedLoss) {
  TrainConfig c = withLayout(tinyConfig(), 1, 2, 1, 1);
  c.parallel.zero = 3;
  expectEqualsReference("maskz3", masked(c, "zero3"));
}

TEST(LossMaskEqualsReference, Cp2Dp2Ring) {
  expectEqualsReference("maskcp2dp2", masked(withLayout(tinyConfig(), 1, 2, 2, 1), "cp2dp2"));
}

TEST(LossMaskEqualsReference, LlamaTp2SequenceParallel) {
  TrainConfig c = withLayout(tinyLlamaConfig(2), 1, 1, 1, 2);
  c.parallel.sequenceParallel = true;
  expectEqualsReference("masklltp2", masked(c, "llamatp2"));
}

}  // namespace
}  // namespace strata::train::testing

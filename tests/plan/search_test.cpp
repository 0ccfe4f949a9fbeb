#include "strata/plan/search.h"

#include <gtest/gtest.h>

#include <set>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

TrainingJob smallJob() {
  TrainingJob job;
  job.model = modelPreset("gpt2-medium");  // 24 layers, 16 heads
  job.cluster = clusterPreset("dgx-a100-80gb-ib200");
  job.cluster.nodes = 2;
  job.globalBatch = 64;
  return job;
}

SearchOptions quick() {
  SearchOptions o;
  o.top = 1000;
  o.microBatchSizes = {1, 4};
  return o;
}

TEST(Search, EveryResultPassesTheRulesAndFits) {
  TrainingJob job = smallJob();
  SearchResult r = searchLayouts(job, quick());
  ASSERT_FALSE(r.best.empty());
  EXPECT_GT(r.considered, r.valid);
  for (const Estimate& e : r.best) {
    EXPECT_EQ(checkLayout(job, e.layout), "") << toString(e.layout);
    EXPECT_TRUE(e.fitsMemory);
    EXPECT_EQ(job.globalBatch % (e.layout.microBatch * e.layout.dp), 0);
    EXPECT_EQ(job.model.heads % e.layout.tp, 0);
    EXPECT_LE(e.layout.tp, 8);
    EXPECT_EQ(e.layout.devices(), 16);
  }
  for (size_t i = 1; i < r.best.size(); ++i) EXPECT_FALSE(ranksBefore(r.best[i], r.best[i - 1]));
}

TEST(Search, MemoryLimitChangesTheAnswer) {
  TrainingJob job;
  job.model = modelPreset("gpt3-13b");
  job.cluster = clusterPreset("dgx-a100-80gb-ib200");
  job.cluster.nodes = 1;
  job.globalBatch = 32;
  SearchOptions o = quick();
  SearchResult roomy = searchLayouts(job, o);
  job.cluster.device.memoryBytes = 32.0 * (1 << 30);
  SearchResult tight = searchLayouts(job, o);
  for (const Estimate& e : tight.best) EXPECT_LE(e.memory.total(), 0.9 * 32.0 * (1 << 30));
  EXPECT_LT(tight.fitting, roomy.fitting);
  EXPECT_LE(tight.best.front().samplesPerSecond, roomy.best.front().samplesPerSecond);
}

TEST(Search, SkipsTensorParallelDegreesThatCannotHoldTheKvHeads) {
  TrainingJob job;
  job.model = modelPreset("llama3-8b");
  job.model.layers = 8;
  job.model.heads = 24;  // of 128: hidden 3072
  job.model.hidden = 24 * 128;
  job.model.kvHeads = 6;  // tp 4 and 8 neither divide 6 nor are multiples of it
  job.model.seqLen = 2048;
  job.cluster = clusterPreset("dgx-a100-80gb-ib200");
  job.globalBatch = 16;
  SearchResult r = searchLayouts(job, quick());
  ASSERT_FALSE(r.best.empty());
  std::set<int> tps;
  for (const Estimate& e : r.best) tps.insert(e.layout.tp);
  EXPECT_EQ(tps, (std::set<int>{1, 2}));
  // With 8 kv heads every tp of a node is valid.
  job.model.kvHeads = 8;
  SearchResult all = searchLayouts(job, quick());
  EXPECT_GT(all.valid, r.valid);
  std::set<int> allTps;
  for (const Estimate& e : all.best) allTps.insert(e.layout.tp);
  EXPECT_EQ(allTps, (std::set<int>{1, 2, 4, 8}));
}

TEST(Search, OutputIsDeterministic) {
  TrainingJob job = smallJob();
  SearchResult a = searchLayouts(job, quick());
  SearchResult b = searchLayouts(job, quick());
  ASSERT_EQ(a.best.size(), b.best.size());
  for (size_t i = 0; i < a.best.size(); ++i) {
    EXPECT_EQ(toString(a.best[i].layout), toString(b.best[i].layout));
    EXPECT_EQ(a.best[i].iterationSeconds, b.best[i].iterationSeconds);
  }
}

// The search skips simulating layouts whose throughput bound falls below its
// top: asking for 3 must give the first 3 of asking for (nearly) all, and
// count the same layouts.
TEST(Search, SkippingHopelessLayoutsKeepsTheTop) {
  TrainingJob job;
  job.model = modelPreset("llama3-8b");
  job.cluster = clusterPreset("dgx-h100-80gb");
  job.cluster.nodes = 2;
  job.globalBatch = 32;
  SearchOptions few = quick(), all = quick();
  few.top = 3;
  all.top = 100000;
  SearchResult top = searchLayouts(job, few);
  SearchResult every = searchLayouts(job, all);
  EXPECT_EQ(top.considered, every.considered);
  EXPECT_EQ(top.valid, every.valid);
  EXPECT_EQ(top.fitting, every.fitting);
  ASSERT_EQ(top.best.size(), 3u);
  ASSERT_GT(every.best.size(), 3u);
  for (size_t i = 0; i < top.best.size(); ++i) {
    EXPECT_EQ(toString(top.best[i].layout), toString(every.best[i].layout));
    EXPECT_EQ(top.best[i].iterationSeconds, every.best[i].iterationSeconds);
  }
}

TEST(Search, TooSmallClusterSaysTheMemoryNeeded) {
  TrainingJob job;
  job.model = modelPreset("gpt3-175b");
  job.cluster = clusterPreset("p4d.24xlarge");
  job.cluster.nodes = 1;
  job.globalBatch = 8;
  try {
    searchLayouts(job, quick());
    FAIL();
  } catch (const PlanError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("cluster too small"), std::string::npos) << what;
    EXPECT_NE(what.find("the least memory any layout needs is"), std::string::npos) << what;
  }
}

TEST(Search, BatchThatNoLayoutDividesSaysWhy) {
  TrainingJob job = smallJob();
  job.model.layers = 1;    // pp 1 only
  job.model.heads = 1;     // tp 1 only
  job.model.seqLen = 999;  // odd: no cp splits it, so dp 16
  job.model.hidden = 64;
  job.model.ffn = 256;
  job.globalBatch = 7;
  try {
    searchLayouts(job, quick());
    FAIL();
  } catch (const PlanError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("global batch 7 is not a multiple of mb 1 x dp 16"), std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace strata::plan

#include "strata/plan/measured_profile.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "plan_command.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

// Round per-layer times (seconds) so that step times can be checked by hand.
MeasuredProfile roundProfile() {
  MeasuredProfile p;
  p.model = {"toy", 4, 64, 4, 256, 32, 16};
  p.microBatch = 2;
  p.dtype = Dtype::Fp32;
  p.embedding = {0.001, 0.002};
  p.block = {0.010, 0.020};
  p.head = {0.003, 0.006};
  p.concurrentSlowdown = 1.5;
  return p;
}

// `devices` on one node; links and memory bandwidth so fast that only
// compute shows, unless a test slows them down.
TrainingJob profiledJob(int globalBatch, int devices) {
  TrainingJob job;
  job.profile = roundProfile();
  job.model = job.profile->model;
  job.dtype = Dtype::Fp32;
  job.precision = precisionOf(*job.profile);
  job.cluster.name = "two-cores";
  job.cluster.devicesPerNode = devices;
  job.cluster.device = {"core", 1e11, 1e11, 1e10, 1e30, 0.5, {}};
  job.cluster.intraNode = {1e30, 0};
  job.cluster.interNode = {1e30, 0};
  job.globalBatch = globalBatch;
  return job;
}

// Forward + backward of the whole model on one micro-batch of the profile.
constexpr double kModelSeconds = 4 * 0.030 + 0.003 + 0.009;

TEST(MeasuredProfile, TextRoundTrips) {
  MeasuredProfile p = roundProfile();
  MeasuredProfile back = parseProfileText(formatProfile(p), "round.profile");
  EXPECT_EQ(back.model.name, "toy");
  EXPECT_EQ(back.model.layers, 4);
  EXPECT_EQ(back.model.hidden, 64);
  EXPECT_EQ(back.model.heads, 4);
  EXPECT_EQ(back.model.ffn, 256);
  EXPECT_EQ(back.model.vocab, 32);
  EXPECT_EQ(back.model.seqLen, 16);
  EXPECT_EQ(back.microBatch, 2);
  EXPECT_EQ(back.dtype, Dtype::Fp32);
  EXPECT_DOUBLE_EQ(back.embedding.backward, 0.002);
  EXPECT_DOUBLE_EQ(back.block.forward, 0.010);
  EXPECT_DOUBLE_EQ(back.head.backward, 0.006);
  EXPECT_DOUBLE_EQ(back.concurrentSlowdown, 1.5);
}

std::string profileErrorOf(const std::string& text) {
  try {
    parseProfileText(text, "p.profile");
  } catch (const PlanError& e) {
    return e.what();
  }
  return "no error";
}

// The round profile's text with the line of `key` set to `value`.
std::string withValue(const std::string& key, const std::string& value) {
  std::string text = formatProfile(roundProfile());
  size_t start = text.find("\n" + key + " = ") + 1;
  return text.replace(start, text.find('\n', start) - start, key + " = " + value);
}

TEST(MeasuredProfile, TextIsTomlWithEveryKeyAtTheTop) {
  std::string text = formatProfile(roundProfile());
  EXPECT_EQ(text.rfind("name = \"toy\"\nlayers = 4\n", 0), 0u) << text;
  EXPECT_NE(text.find("\nprecision = \"fp32\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nconcurrent_slowdown = 1.5\n"), std::string::npos) << text;
}

TEST(MeasuredProfile, BadTextNamesTheFileLineAndKey) {
  EXPECT_EQ(profileErrorOf("layers = 4\n"),
            "p.profile: missing profile keys: block_backward_ms, block_forward_ms, "
            "concurrent_slowdown, embedding_backward_ms, embedding_forward_ms, ffn, "
            "head_backward_ms, head_forward_ms, heads, hidden, micro_batch, seq_len, vocab, "
            "precision");
  std::string good = formatProfile(roundProfile());
  EXPECT_EQ(profileErrorOf(good + "speed = 3\n").substr(0, 35),
            "p.profile:17: unknown key 'speed'; ");
  EXPECT_EQ(profileErrorOf(withValue("block_forward_ms", "-1")),
            "p.profile:12: block_forward_ms expects a positive number, got integer -1");
  EXPECT_EQ(profileErrorOf(withValue("block_forward_ms", "nan")),
            "p.profile:12: block_forward_ms expects a positive number, got float nan");
  EXPECT_EQ(profileErrorOf(withValue("block_forward_ms", "'fast'")),
            "p.profile:12: block_forward_ms expects a positive number, got string \"fast\"");
  EXPECT_EQ(profileErrorOf(withValue("layers", "2.5")),
            "p.profile:2: layers expects a whole number, got float 2.5");
  EXPECT_EQ(profileErrorOf(withValue("concurrent_slowdown", "0.5")),
            "p.profile:16: concurrent_slowdown expects a time factor >= 1, got float 0.5");
  EXPECT_EQ(profileErrorOf(withValue("precision", "\"fp8\"")),
            "p.profile:9: precision expects \"fp32\" or \"bf16\", got string \"fp8\"");
  EXPECT_EQ(profileErrorOf(withValue("name", "1")),
            "p.profile:1: name expects a string, got integer 1");
  EXPECT_THROW(loadProfileFile("/nonexistent/x.profile"), PlanError);
}

// A profile in the `key = value` form of Strata before TOML (unquoted
// strings) is refused at the line of its first unquoted string; a syntax
// error names the column too.
TEST(MeasuredProfile, SyntaxErrorsNameLineAndColumn) {
  std::string unquoted = profileErrorOf(withValue("precision", "fp32"));
  EXPECT_EQ(unquoted.substr(0, 12), "p.profile:9:") << unquoted;
  EXPECT_NE(unquoted.find("'fp'"), std::string::npos) << unquoted;
  std::string twice = profileErrorOf(withValue("block_forward_ms", "10\nblock_forward_ms = 11"));
  EXPECT_EQ(twice.substr(0, 16), "p.profile:13:20:") << twice;
  EXPECT_NE(twice.find("'block_forward_ms'"), std::string::npos) << twice;
}

TEST(MeasuredProfile, OneDeviceStepIsTheSumOfMeasuredLayers) {
  TrainingJob job = profiledJob(8, 1);
  Estimate e = evaluateLayout(job, parseLayout("pp1,tp1,dp1,mb2"));
  EXPECT_EQ(e.microBatches, 4);
  EXPECT_NEAR(e.time.compute, 4 * kModelSeconds, 1e-12);
  EXPECT_NEAR(e.iterationSeconds, 4 * kModelSeconds, 1e-9);
  // A micro-batch twice the profiled one takes twice as long, half as often.
  Estimate big = evaluateLayout(job, parseLayout("pp1,tp1,dp1,mb4"));
  EXPECT_NEAR(big.time.compute, 4 * kModelSeconds, 1e-12);
}

TEST(MeasuredProfile, BusyNodeStretchesComputeBySlowdown) {
  TrainingJob job = profiledJob(8, 2);
  // dp2: half the micro-batches per replica, both cores busy (x 1.5).
  Estimate dp = evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb2"));
  EXPECT_NEAR(dp.time.compute, 2 * kModelSeconds * 1.5, 1e-12);
  // tp2: every layer's work halves, both cores busy.
  Estimate tp = evaluateLayout(job, parseLayout("pp1,tp2,dp1,mb2"));
  EXPECT_NEAR(tp.time.compute, 4 * kModelSeconds / 2 * 1.5, 1e-12);
  // pp2 with GPipe and equal stages: stage 0 = 2 blocks + embedding, stage 1
  // (the slower) = 2 blocks + head. Stage 1 runs its 4 forwards and 4
  // backwards back to back, after stage 0's first forward and before its
  // last backward.
  Estimate pp = evaluateLayout(job, parseLayout("pp2,tp1,dp1,mb2,gpipe"));
  double stage0 = 1.5 * (2 * 0.030 + 0.003), stage1 = 1.5 * (2 * 0.030 + 0.009);
  EXPECT_NEAR(pp.iterationSeconds, stage0 + 4 * stage1, 1e-9);
}

TEST(MeasuredProfile, MeasuredShardLeavesTheReplicatedShareOfABlockWhole) {
  // A tp = 2 shard takes 70% of the block: r = 2 * 0.7 - 1 = 0.4 of it runs
  // on every rank. Embedding and head still divide.
  auto job = [](int devices) {
    TrainingJob j = profiledJob(8, devices);
    j.profile->concurrentSlowdown = 1;
    j.profile->blockTp2 = {0.007, 0.014};
    return j;
  };
  double ends = 0.003 + 0.009;
  Estimate two = evaluateLayout(job(2), parseLayout("pp1,tp2,dp1,mb2"));
  EXPECT_NEAR(two.time.compute, 4 * (4 * 0.030 * 0.7 + ends / 2), 1e-12);
  Estimate four = evaluateLayout(job(4), parseLayout("pp1,tp4,dp1,mb2"));
  EXPECT_NEAR(four.time.compute, 4 * (4 * 0.030 * (0.6 / 4 + 0.4) + ends / 4), 1e-12);

  MeasuredProfile back = parseProfileText(formatProfile(*job(2).profile), "shard.profile");
  EXPECT_DOUBLE_EQ(back.blockTp2.forward, 0.007);
  EXPECT_DOUBLE_EQ(back.blockTp2.backward, 0.014);
  try {
    parseProfileText(formatProfile(roundProfile()) + "block_tp2_forward_ms = 7\n", "half.profile");
    FAIL() << "one of the pair was accepted";
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()),
              "half.profile: block_tp2_forward_ms and block_tp2_backward_ms come together");
  }
}

// A block on half the sequences takes 60% of its time: f = 2 * 0.6 - 1 =
// 0.2 of it stays whatever the tokens. So a rank with fewer tokens than
// profiled (a smaller micro-batch, or cp's share of each sequence) keeps
// that part; embedding and head still scale with the tokens.
TEST(MeasuredProfile, TheHalfBatchPointKeepsTheBlocksFixedPart) {
  TrainingJob job = profiledJob(8, 1);
  job.profile->blockHalf = {0.006, 0.012};
  double ends = 0.003 + 0.009;
  Estimate same = evaluateLayout(job, parseLayout("pp1,tp1,dp1,mb2"));
  EXPECT_NEAR(same.time.compute, 4 * kModelSeconds, 1e-12);
  Estimate small = evaluateLayout(job, parseLayout("pp1,tp1,dp1,mb1"));
  EXPECT_NEAR(small.time.compute, 8 * (4 * 0.030 * 0.6 + ends / 2), 1e-12);
  // At cp 4 a block takes 0.2 + 0.8 / 4 = 0.4 of its time, not 1/4 (its
  // ring backward's recompute of the scores with it).
  TrainingJob shared = profiledJob(8, 4);
  shared.profile->concurrentSlowdown = 1;
  Estimate linear = evaluateLayout(shared, parseLayout("pp1,tp1,dp1,cp4,mb2"));
  shared.profile->blockHalf = {0.006, 0.012};
  Estimate cp4 = evaluateLayout(shared, parseLayout("pp1,tp1,dp1,cp4,mb2"));
  EXPECT_NEAR(cp4.time.compute - ends, (linear.time.compute - ends) * 0.4 / 0.25, 1e-12);

  MeasuredProfile back = parseProfileText(formatProfile(*job.profile), "half.profile");
  EXPECT_DOUBLE_EQ(back.blockHalf.forward, 0.006);
  EXPECT_DOUBLE_EQ(back.blockHalf.backward, 0.012);
  try {
    parseProfileText(formatProfile(roundProfile()) + "block_half_backward_ms = 12\n",
                     "one.profile");
    FAIL() << "one of the pair was accepted";
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()),
              "one.profile: block_half_forward_ms and block_half_backward_ms come together");
  }
}

TEST(MeasuredProfile, TensorParallelMovesFp32Activations) {
  TrainingJob job = profiledJob(8, 2);
  job.cluster.intraNode = {1e9, 0};
  Estimate tp = evaluateLayout(job, parseLayout("pp1,tp2,dp1,mb2"));
  // Per layer and micro-batch: 2 forward + 2 backward all-reduces of
  // b*s*h fp32 values, each n / beta on a two-rank ring.
  double allReduce = 4.0 * 2 * 16 * 64 / 1e9;
  EXPECT_NEAR(tp.time.tpComm, 4 * 4 * 4 * allReduce, 1e-12);
}

TEST(MeasuredProfile, ProfileOfAnotherModelIsRejected) {
  TrainingJob job = profiledJob(8, 2);
  job.model.hidden = 128;
  try {
    evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb2"));
    FAIL() << "no error";
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the measured profile is of a different model (layers 4, hidden 64, heads 4, "
              "ffn 256, vocab 32, seq 16) than the job's (layers 4, hidden 128, heads 4, "
              "ffn 256, vocab 32, seq 16)");
  }
}

TEST(MeasuredProfile, AGptProfileCannotTimeALlama) {
  TrainingJob job = profiledJob(8, 2);
  job.model.family = Family::kLlama;
  job.model.tiedEmbeddings = false;
  try {
    evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb2"));
    FAIL() << "no error";
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the measured profile is of a different model (layers 4, hidden 64, heads 4, "
              "ffn 256, vocab 32, seq 16) than the job's (llama, layers 4, hidden 64, heads 4, "
              "kv heads 4, ffn 256, vocab 32, seq 16)");
  }
}

TEST(MeasuredProfile, PlanCommandReadsTheProfile) {
  std::string path = ::testing::TempDir() + "/round.profile";
  std::ofstream(path) << formatProfile(roundProfile());
  std::ostringstream out, err;
  CLI::App strata("", "strata");
  Subcommand plan = addPlanCommand(strata, out, err);
  int code = runCommandLine(strata, {plan},
                            {"plan", "--profile", path, "--global-batch", "8", "--layout",
                             "pp1,tp1,dp2,mb2", "--cluster", "cpu-local", "--json"},
                            out, err);
  ASSERT_EQ(code, 0) << err.str();
  TrainingJob job = profiledJob(8, 2);
  job.cluster = clusterPreset("cpu-local");
  job.model.name = path;
  Estimate e = evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb2"));
  // Numbers are written so they read back exactly.
  EXPECT_EQ(nlohmann::json::parse(out.str()).at("iteration_s").get<double>(), e.iterationSeconds)
      << out.str();
}

}  // namespace
}  // namespace strata::plan

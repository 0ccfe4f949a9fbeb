#include "plan_command.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace strata {
namespace {

struct Outcome {
  int code;
  std::string out, err;
};

// `strata plan ARGS`, run as the binary runs it.
Outcome plan(std::vector<std::string> args) {
  std::ostringstream out, err;
  CLI::App strata("", "strata");
  Subcommand command = addPlanCommand(strata, out, err);
  args.insert(args.begin(), "plan");
  int code = runCommandLine(strata, {command}, args, out, err);
  return {code, out.str(), err.str()};
}

const std::vector<std::string> kMegatron = {"--model",        "megatron-145.6b",
                                            "--cluster",      "dgx-a100-80gb-ib200",
                                            "--nodes",        "192",
                                            "--global-batch", "2304",
                                            "--tokens",       "300e9"};

std::vector<std::string> with(std::vector<std::string> args, std::vector<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(PlanCommand, FixedLayoutPrintsThroughputAndExplains) {
  Outcome r = plan(with(kMegatron, {"--layout", "pp8,tp8,mb1,recompute", "--explain"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("pp8,tp8,dp24,mb1,v1,1f1b,zero0,recompute"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pipeline bubble"), std::string::npos);
  EXPECT_NE(r.out.find("memory per device"), std::string::npos);
  // Rank by rank: with the trainer's recompute each rank keeps its stage's
  // inputs (1F1B's first stage pp of them) and rebuilds the stage for one
  // micro-batch's backward; a rank holds only its latest send, so the first
  // rank, which keeps the most inputs and the embedding, is the heaviest.
  EXPECT_NE(
      r.out.find("       0  0                 4.41       4.41      26.48         6.46     0.26 "
                 "     8    42.03  <- heaviest"),
      std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("       1  1                 4.22       4.22      25.32         6.70     0.26 "
                 "     7    40.72\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("       7  7                 4.37       4.37      26.20         6.61     0.26 "
                 "     1    41.80\n"),
      std::string::npos)
      << r.out;
}

TEST(PlanCommand, JsonIsOneObjectPerLayout) {
  Outcome r = plan({"--model", "gpt2-medium", "--cluster", "dgx-a100-80gb-ib200", "--nodes", "2",
                    "--global-batch", "64", "--top", "3", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    nlohmann::json layout = nlohmann::json::parse(line);
    EXPECT_EQ(layout.at("rank"), ++count);
    EXPECT_GT(layout.at("samples_per_s").get<double>(), 0) << line;
    EXPECT_TRUE(layout.at("layout").is_string()) << line;
  }
  EXPECT_EQ(count, 3);
}

TEST(PlanCommand, SearchOutputIsDeterministic) {
  std::vector<std::string> args = {"--model",        "gpt2-medium", "--cluster", "dgx-h100-80gb",
                                   "--global-batch", "32",          "--top",     "4"};
  EXPECT_EQ(plan(args).out, plan(args).out);
}

TEST(PlanCommand, InvalidInputExitsTwoWithTheReason) {
  Outcome unknown = plan({"--model", "gpt9"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("known presets: "), std::string::npos) << unknown.err;
  Outcome cluster = plan({"--cluster", "tpu-pod"});
  EXPECT_EQ(cluster.code, 2);
  EXPECT_NE(cluster.err.find("dgx-h100-80gb"), std::string::npos) << cluster.err;
  Outcome small = plan({"--model", "gpt3-175b", "--cluster", "p4d.24xlarge", "--nodes", "1"});
  EXPECT_EQ(small.code, 2);
  EXPECT_NE(small.err.find("cluster too small"), std::string::npos) << small.err;
  Outcome layout = plan(with(kMegatron, {"--layout", "pp8,tp8,dp7"}));
  EXPECT_EQ(layout.code, 2);
  EXPECT_NE(layout.err.find("= 448 devices, but the cluster has 192 nodes"), std::string::npos)
      << layout.err;
  Outcome flag = plan({"--nodes", "x"});
  EXPECT_EQ(flag.code, 2);
  EXPECT_NE(flag.err.find("--nodes expects an integer"), std::string::npos) << flag.err;
  Outcome file = plan({"--cluster-file", "/nonexistent/c.txt"});
  EXPECT_EQ(file.code, 2);
  EXPECT_NE(file.err.find("cannot read cluster file"), std::string::npos);
}

TEST(PlanCommand, VSchedulesExplainTheirPlacementAndDualPipeVNeedsTwicePpMicroBatches) {
  Outcome zbv = plan(with(kMegatron, {"--layout", "pp8,tp8,mb1,zb-v,recompute", "--explain"}));
  ASSERT_EQ(zbv.code, 0) << zbv.err;
  // 96 micro-batches, each crossing 2 (8 - 1) links each way.
  EXPECT_NE(zbv.out.find("pipeline: 16 stages in a V on pp 8 ranks (rank 0 runs the first and the "
                         "last); 2688 hand-offs between ranks a step"),
            std::string::npos)
      << zbv.out;
  // 2304 sequences over mb 8 x dp 24: 12 micro-batches.
  Outcome few = plan(with(kMegatron, {"--layout", "pp8,tp8,mb8,dualpipe-v"}));
  EXPECT_EQ(few.code, 2);
  EXPECT_NE(few.err.find("dualpipe-v needs at least 2 x pp = 16 micro-batches per pipeline, but "
                         "the batch gives 12"),
            std::string::npos)
      << few.err;
}

// gpt2-medium's sizes, flag by flag.
const std::vector<std::string> kMediumSizes = {"--layers", "24",    "--hidden",  "1024",
                                               "--heads",  "16",    "--ffn",     "4096",
                                               "--vocab",  "50257", "--seq-len", "1024"};
const std::vector<std::string> kOnEightA100 = {"--cluster", "dgx-a100-80gb-ib200", "--global-batch",
                                               "64", "--json"};

TEST(PlanCommand, ACustomModelPlansAsThePresetOfTheSameShape) {
  Outcome preset = plan(with({"--model", "gpt2-medium"}, kOnEightA100));
  Outcome custom = plan(with(kMediumSizes, kOnEightA100));
  ASSERT_EQ(custom.code, 0) << custom.err;
  EXPECT_EQ(custom.out, preset.out);
  std::vector<std::string> layout = {"--layout", "pp2,tp2,mb2,zero1"};
  EXPECT_EQ(plan(with(with(kMediumSizes, kOnEightA100), layout)).out,
            plan(with(with({"--model", "gpt2-medium"}, kOnEightA100), layout)).out);
  Outcome table = plan(with(kMediumSizes, {"--cluster", "dgx-a100-80gb-ib200", "--top", "1"}));
  EXPECT_NE(table.out.find("strata plan: custom (354.8M parameters: 24 layers, hidden 1024, 16 "
                           "heads, ffn 4096, vocab 50257, seq 1024)"),
            std::string::npos)
      << table.out;
}

TEST(PlanCommand, SizeFlagsOverrideThePreset) {
  std::vector<std::string> grown = {"--model", "gpt2-small", "--layers", "24",    "--hidden",
                                    "1024",    "--heads",    "16",       "--ffn", "4096"};
  EXPECT_EQ(plan(with(grown, kOnEightA100)).out,
            plan(with({"--model", "gpt2-medium"}, kOnEightA100)).out);
  Outcome table = plan(with(grown, {"--cluster", "dgx-a100-80gb-ib200", "--top", "1"}));
  EXPECT_NE(table.out.find("gpt2-small with layers 24, hidden 1024, heads 16, ffn 4096 ("),
            std::string::npos)
      << table.out;
  // --seq-len alone resizes the default preset, as it always did.
  Outcome longer = plan({"--seq-len", "2048", "--top", "1"});
  ASSERT_EQ(longer.code, 0) << longer.err;
  EXPECT_NE(longer.out.find("gpt2-small with seq-len 2048"), std::string::npos) << longer.out;
}

// Named after the test too: ctest runs tests side by side, and two writing
// one path would hand each other a truncated file.
std::string writeFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// A strata train config whose model is gpt2-medium's shape, trained in bf16.
std::string mediumConfig() {
  return writeFile("medium.toml",
                   "[model]\nlayers = 24\nhidden = 1024\nheads = 16\nffn = 4096\nvocab = 50257\n"
                   "context = 1024\n[parallel]\npp = 2\ndp = 2\ntp = 2\nschedule = \"zb-h1\"\n"
                   "[train]\nseq_len = 1024\nglobal_batch = 64\nmicro_batch = 2\n"
                   "precision = \"bf16\"\n");
}

TEST(PlanCommand, ConfigGivesTheModelTheBatchAndOnRequestTheLayout) {
  std::string config = mediumConfig();
  Outcome r = plan(
      {"--config", config, "--cluster", "dgx-a100-80gb-ib200", "--layout", "config", "--explain"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(config + " (354.8M parameters: 24 layers, hidden 1024, 16 heads, ffn "
                                "4096, vocab 50257, seq 1024)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("global batch 64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pp2,tp2,dp2,mb2,v1,zb-h1,zero0"), std::string::npos) << r.out;
  // Without --layout config the search runs for the config's model and batch.
  Outcome search = plan({"--config", config, "--cluster", "dgx-a100-80gb-ib200", "--top", "2"});
  ASSERT_EQ(search.code, 0) << search.err;
  EXPECT_NE(search.out.find("layouts considered"), std::string::npos) << search.out;
  // Flags override the file.
  Outcome smaller = plan({"--config", config, "--cluster", "dgx-a100-80gb-ib200", "--layers", "12",
                          "--global-batch", "32", "--layout", "config"});
  ASSERT_EQ(smaller.code, 0) << smaller.err;
  EXPECT_NE(smaller.out.find(config + " with layers 12"), std::string::npos) << smaller.out;
  EXPECT_NE(smaller.out.find("global batch 32"), std::string::npos) << smaller.out;
}

// A config that starts from Hugging Face weights takes the model the reader
// gives (the config.json beside them, in strata train's binary), under its
// own [model] settings.
TEST(PlanCommand, ConfigStartingFromWeightsPlansTheirModel) {
  std::string config =
      writeFile("init_from.toml",
                "[model]\nlayers = 12\n[checkpoint]\ninit_from = \"hf\"\n[train]\nseq_len = 1024\n"
                "global_batch = 64\nmicro_batch = 2\n");
  std::string asked;
  auto reader = [&](const std::string& path) {
    asked = path;
    return std::string(
        "[model]\narchitecture = \"llama\"\nlayers = 24\nhidden = 1024\n"
        "heads = 16\nkv_heads = 4\nffn = 2816\nvocab = 32000\n");
  };
  std::ostringstream out, err;
  CLI::App strata("", "strata");
  Subcommand command = addPlanCommand(strata, out, err, reader);
  int code = runCommandLine(strata, {command},
                            {"plan", "--config", config, "--cluster", "dgx-a100-80gb-ib200",
                             "--layout", "pp1,tp1,dp8,mb2"},
                            out, err);
  ASSERT_EQ(code, 0) << err.str();
  EXPECT_EQ(asked, config);
  EXPECT_NE(out.str().find("llama, 12 layers, hidden 1024, 16 heads, 4 kv heads, ffn 2816, vocab "
                           "32000, seq 1024"),
            std::string::npos)
      << out.str();
}

TEST(PlanCommand, TheRehearsalClusterRunsTheDemoConfig) {
  Outcome r = plan({"--cluster-file", STRATA_SOURCE_DIR "/deploy/rehearsal-cluster.toml",
                    "--config", STRATA_SOURCE_DIR "/configs/demo.toml", "--layout", "config"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("on 2 x rehearsal-cpu-node (4 x cpu-core), global batch 16"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("pp2,tp2,dp1,mb4,v1,1f1b,zero0"), std::string::npos) << r.out;
}

TEST(PlanCommand, InconsistentSizesAreRefusedByName) {
  auto refused = [](const std::vector<std::string>& args, const std::string& reason) {
    Outcome r = plan(args);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
  };
  refused({"--model", "gpt2-small", "--heads", "5"}, "5 heads do not divide hidden size 768");
  refused(with(kMediumSizes, {"--hidden", "1000"}), "16 heads do not divide hidden size 1000");
  refused({"--layers", "0"}, "--layers must be at least 1, got 0");
  refused({"--hidden", "-8"}, "--hidden must be at least 1, got -8");
  refused({"--vocab", "3000000000"}, "--vocab must be at most 2147483647, got 3000000000");
  refused({"--layers", "4", "--hidden", "128"},
          "a model given by its sizes needs --layers, --hidden, --heads, --ffn, --vocab and "
          "--seq-len; missing --heads, --ffn, --vocab, --seq-len");
  std::string config = mediumConfig();
  refused({"--model", "gpt2-small", "--config", config},
          "--model gpt2-small and --config " + config + " both name the model");
  refused({"--layout", "config"}, "--layout config predicts the layout of a strata train config");
  refused({"--config", writeFile("bad.toml", "[model]\nlayers = -1\n")},
          "bad.toml:2: model.layers expects a whole number from 1 to 2147483647, got integer -1");
  refused({"--config", "/nonexistent/run.toml"}, "cannot read config file '/nonexistent/run.toml'");
}

// Llama 3 8B's shape, flag by flag.
const std::vector<std::string> kLlama3Sizes = {
    "--architecture", "llama", "--kv-heads", "8",     "--layers", "32",     "--hidden",  "4096",
    "--heads",        "32",    "--ffn",      "14336", "--vocab",  "128256", "--seq-len", "8192"};
const std::vector<std::string> kOnEightH100 = {"--cluster", "dgx-h100-80gb", "--global-batch", "32",
                                               "--json"};

TEST(PlanCommand, ArchitectureLlamaPlansTheLlama3Preset) {
  Outcome custom = plan(with(kLlama3Sizes, kOnEightH100));
  ASSERT_EQ(custom.code, 0) << custom.err;
  EXPECT_EQ(custom.out, plan(with({"--model", "llama3-8b"}, kOnEightH100)).out);
  Outcome table = plan(with(kLlama3Sizes, {"--cluster", "dgx-h100-80gb", "--layout", "tp8"}));
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("strata plan: custom (8.0B parameters: llama, 32 layers, hidden 4096, "
                           "32 heads, 8 kv heads, ffn 14336, vocab 128256, seq 8192)"),
            std::string::npos)
      << table.out;
  // A GPT of the same sizes is another model.
  std::vector<std::string> gptSizes(kLlama3Sizes.begin() + 4, kLlama3Sizes.end());
  std::vector<std::string> layout = {"--layout", "tp8"};
  EXPECT_NE(plan(with(with(gptSizes, kOnEightH100), layout)).out,
            plan(with(with(kLlama3Sizes, kOnEightH100), layout)).out);
}

TEST(PlanCommand, ArchitectureAndKvHeadsOverrideAPreset) {
  Outcome r = plan({"--model", "llama3-8b", "--kv-heads", "32", "--cluster", "dgx-h100-80gb",
                    "--layout", "tp8"});
  ASSERT_EQ(r.code, 0) << r.err;
  // 8,030,261,248 + 32 layers x 2 x 4096 x (4096 - 1024) more k and v weights.
  EXPECT_NE(r.out.find("llama3-8b with kv-heads 32 (8.8B parameters: llama, 32 layers, hidden "
                       "4096, 32 heads, 32 kv heads,"),
            std::string::npos)
      << r.out;
}

TEST(PlanCommand, ALlamaConfigPlansItsLayout) {
  std::string config = writeFile(
      "llama.toml",
      "[model]\narchitecture = \"llama\"\nlayers = 32\nhidden = 4096\nheads = 32\n"
      "kv_heads = 8\nffn = 14336\nvocab = 128256\nrope_theta = 500000.0\n"
      "[parallel]\npp = 1\ndp = 1\ntp = 8\nzero = 1\ncheckpoint_activations = true\n"
      "sequence_parallel = true\n[train]\nseq_len = 8192\nglobal_batch = 16\nmicro_batch = 1\n"
      "precision = \"bf16\"\n");
  Outcome r = plan({"--config", config, "--cluster", "dgx-h100-80gb", "--layout", "config"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(config + " (8.0B parameters: llama, 32 layers, hidden 4096, 32 heads, 8 kv "
                                "heads, ffn 14336, vocab 128256, seq 8192)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("pp1,tp8,dp1,mb1,v1,1f1b,zero1,recompute,sp"), std::string::npos) << r.out;
}

TEST(PlanCommand, LlamaInputThatMakesNoModelOrLayoutIsRefusedByName) {
  auto refused = [](const std::vector<std::string>& args, const std::string& reason) {
    Outcome r = plan(args);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
  };
  refused({"--architecture", "mamba"},
          "unknown architecture 'mamba'; known architectures: gpt2, llama, strata");
  refused(with(kLlama3Sizes, {"--kv-heads", "5"}), "kv-heads 5 do not divide the 32 heads");
  refused({"--model", "gpt2-small", "--kv-heads", "4"},
          "kv-heads 4 differ from the 12 heads, which only architecture llama allows");
  refused({"--model", "llama3-8b", "--kv-heads", "-1"}, "--kv-heads must be at least 0, got -1");
  // 24 heads of 128 with 6 kv heads: tp 4 can neither split nor replicate them.
  refused({"--model", "llama3-8b", "--heads", "24", "--hidden", "3072", "--kv-heads", "6",
           "--cluster", "dgx-h100-80gb", "--layout", "tp4"},
          "tp 4 neither divides the 6 kv heads nor is a multiple of them");
}

// Llama 3 8B on 2^20-token sequences over eight DGX H100s: no layout
// without context parallelism fits (tests/plan/context_parallel_test.cpp).
const std::vector<std::string> kLongLlama = {
    "--model",       "llama3-8b", "--seq-len", "1048576",        "--cluster",
    "dgx-h100-80gb", "--nodes",   "8",         "--global-batch", "8"};

TEST(PlanCommand, ALongSequenceIsPlannedWithContextParallelism) {
  Outcome r = plan(with(kLongLlama, {"--top", "3", "--explain"}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line, first;
  while (std::getline(lines, line) && first.empty())
    if (line.rfind("  1  ", 0) == 0) first = line;
  EXPECT_NE(first.find(",cp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cp communication"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("context parallel: cp "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of every sequence's 1048576 tokens"), std::string::npos) << r.out;
  // A cp layout given by hand: dp takes what tp x cp leave of the 64 devices.
  Outcome fixed = plan(with(kLongLlama, {"--layout", "tp8,cp4,cp-a2a,recompute,sp", "--json"}));
  ASSERT_EQ(fixed.code, 2) << fixed.out;  // 4 query heads a tp rank but 1 kv head
  EXPECT_NE(fixed.err.find("cp-a2a gives each of the cp 4 ranks whole heads"), std::string::npos)
      << fixed.err;
  // Without context parallelism nothing fits.
  Outcome noCp = plan(with(kLongLlama, {"--max-cp", "1"}));
  EXPECT_EQ(noCp.code, 2) << noCp.out;
  EXPECT_NE(noCp.err.find("cluster too small"), std::string::npos) << noCp.err;
  Outcome ring = plan(with(kLongLlama, {"--layout", "tp8,cp4,zero1,recompute,sp", "--json"}));
  ASSERT_EQ(ring.code, 0) << ring.err;
  nlohmann::json estimate = nlohmann::json::parse(ring.out);
  EXPECT_EQ(estimate.at("layout"), "pp1,tp8,dp2,cp4,mb1,v1,1f1b,zero1,recompute,sp");
  EXPECT_GT(estimate.at("cp_comm_s").get<double>(), 0);
}

// Mixtral 8x7B on four p4d nodes (32 A100s of 40 GB), sequences of 4096: ep
// lets it keep its activations (tests/plan/expert_parallel_test.cpp).
const std::vector<std::string> kMixtral = {
    "--model",      "mixtral-8x7b", "--seq-len", "4096",           "--cluster",
    "p4d.24xlarge", "--nodes",      "4",         "--global-batch", "64"};

TEST(PlanCommand, AMixtureOfExpertsModelIsPlannedWithExpertParallelism) {
  Outcome r = plan(with(kMixtral, {"--top", "3", "--explain"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mixtral-8x7b with seq-len 4096 (46.7B parameters, 12.9B active: llama, "
                       "32 layers, hidden 4096, 32 heads, 8 kv heads, ffn 14336, 8 experts of "
                       "ffn 14336, top 2, vocab 32000, seq 4096)"),
            std::string::npos)
      << r.out;
  std::istringstream lines(r.out);
  std::string line, first;
  while (std::getline(lines, line) && first.empty())
    if (line.rfind("  1  ", 0) == 0) first = line;
  EXPECT_NE(first.find(",ep"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ep communication"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expert parallel: ep "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" experts of each of the 32 MoE layers"), std::string::npos) << r.out;
  Outcome noEp = plan(with(kMixtral, {"--top", "1", "--max-ep", "1"}));
  ASSERT_EQ(noEp.code, 0) << noEp.err;
  EXPECT_EQ(noEp.out.find(",ep"), std::string::npos) << noEp.out;
  // An ep layout given by hand: dp takes what pp x cp leave of the 32 devices.
  Outcome fixed =
      plan(with(kMixtral, {"--layout", "pp4,cp8,ep4,v4,interleaved-1f1b,zero1", "--json"}));
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  nlohmann::json estimate = nlohmann::json::parse(fixed.out);
  EXPECT_EQ(estimate.at("layout"), "pp4,tp1,dp1,cp8,ep4,mb1,v4,interleaved-1f1b,zero1");
  EXPECT_GT(estimate.at("ep_comm_s").get<double>(), 0);
  // ZeRO-3 with ep: the experts' parameters sharded over their own replicas.
  Outcome zero3 = plan(with(kMixtral, {"--layout", "pp4,cp8,ep4,zero3", "--json"}));
  ASSERT_EQ(zero3.code, 0) << zero3.err;
  EXPECT_GT(nlohmann::json::parse(zero3.out).at("ep_comm_s").get<double>(), 0);
  Outcome sp = plan(with(kMixtral, {"--layout", "tp2,dp16,ep4,sp"}));
  EXPECT_EQ(sp.code, 2) << sp.out;
  EXPECT_NE(sp.err.find("do not take sequence parallel"), std::string::npos) << sp.err;
}

TEST(PlanCommand, MoeFlagsAndConfigsDescribeTheExperts) {
  Outcome r = plan({"--model", "llama3-8b", "--moe-experts", "8", "--moe-expert-ffn", "14336",
                    "--moe-shared-experts", "1", "--moe-every", "2", "--cluster", "dgx-h100-80gb",
                    "--layout", "tp8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("llama3-8b with moe-experts 8, moe-expert-ffn 14336, moe-shared-experts 1, "
                       "moe-every 2 ("),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ffn 14336, 8 experts of ffn 14336, top 2, 1 shared, MoE every 2 layers"),
            std::string::npos)
      << r.out;
  Outcome gpt = plan({"--model", "gpt2-small", "--moe-experts", "4", "--moe-expert-ffn", "64"});
  EXPECT_EQ(gpt.code, 2) << gpt.out;
  EXPECT_NE(gpt.err.find("only architecture llama has mixture-of-experts layers"),
            std::string::npos)
      << gpt.err;
  Outcome dense =
      plan({"--model", "llama3-8b", "--cluster", "dgx-h100-80gb", "--layout", "dp8,ep2"});
  EXPECT_EQ(dense.code, 2) << dense.out;
  EXPECT_NE(dense.err.find("ep 2 spreads experts, but model llama3-8b has none"), std::string::npos)
      << dense.err;
  std::string config = writeFile(
      "moe.toml",
      "[model]\narchitecture = \"llama\"\nlayers = 8\nhidden = 512\nheads = 8\nkv_heads = 2\n"
      "ffn = 1024\nvocab = 32000\n[model.moe]\nexperts = 8\ntop_k = 2\nexpert_ffn = 1024\n"
      "[parallel]\ndp = 8\nep = 4\nzero = 1\n[train]\nseq_len = 1024\nglobal_batch = 16\n"
      "micro_batch = 2\n");
  Outcome configured =
      plan({"--config", config, "--cluster", "dgx-h100-80gb", "--layout", "config"});
  ASSERT_EQ(configured.code, 0) << configured.err;
  EXPECT_NE(configured.out.find("pp1,tp1,dp8,ep4,mb2,v1,1f1b,zero1"), std::string::npos)
      << configured.out;
}

// LoRA on a frozen base: the header says what trains, the plan's memory
// drops the base's gradients and optimizer state, and the flags that make
// no LoRA are refused by name.
TEST(PlanCommand, FinetuneLoraPlansTheAdaptersOnAFrozenBase) {
  std::vector<std::string> llama = {"--model",       "llama3-8b",       "--cluster",
                                    "dgx-h100-80gb", "--global-batch",  "32",
                                    "--layout",      "pp1,tp2,dp4,mb1", "--json"};
  Outcome full = plan(llama);
  Outcome lora =
      plan(with(llama, {"--finetune", "lora", "--lora-rank", "16", "--lora-targets", "q,k,v,o"}));
  ASSERT_EQ(full.code, 0) << full.err;
  ASSERT_EQ(lora.code, 0) << lora.err;
  auto fullJson = nlohmann::json::parse(full.out), loraJson = nlohmann::json::parse(lora.out);
  EXPECT_LT(loraJson["memory_gib"].get<double>(), 0.6 * fullJson["memory_gib"].get<double>());
  EXPECT_GT(loraJson["tokens_per_s"].get<double>(), fullJson["tokens_per_s"].get<double>());
  // Dropout on the adapters' input keeps each adapter's masked input and mask.
  Outcome dropped = plan(with(llama, {"--finetune", "lora", "--lora-rank", "16", "--lora-targets",
                                      "q,k,v,o", "--lora-dropout", "0.05"}));
  ASSERT_EQ(dropped.code, 0) << dropped.err;
  EXPECT_GT(nlohmann::json::parse(dropped.out)["memory_gib"].get<double>(),
            loraJson["memory_gib"].get<double>());
  // A preset's weights are 2 bytes already (its optimizer keeps the fp32
  // copy): a bf16 base changes nothing there (the bytes by hand: lora_test).
  Outcome bf16 = plan(with(llama, {"--finetune", "lora", "--lora-rank", "16", "--lora-targets",
                                   "q,k,v,o", "--base-dtype", "bf16"}));
  ASSERT_EQ(bf16.code, 0) << bf16.err;
  EXPECT_EQ(nlohmann::json::parse(bf16.out)["memory_gib"].get<double>(),
            loraJson["memory_gib"].get<double>());
  Outcome text = plan({"--model", "llama3-8b", "--cluster", "dgx-h100-80gb", "--finetune", "lora",
                       "--layout", "tp8,mb1"});
  EXPECT_NE(text.out.find("LoRA: rank 8 adapters on q, v, 3.4M parameters trained"),
            std::string::npos)
      << text.out;
  for (auto [args, reason] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--model", "gpt2-small", "--finetune", "lora"}, "a GPT has none"},
           {{"--model", "llama3-8b", "--lora-rank", "4"}, "add --finetune lora"},
           {{"--model", "llama3-8b", "--lora-dropout", "0.1"}, "add --finetune lora"},
           {{"--model", "llama3-8b", "--base-dtype", "bf16"}, "add --finetune lora"},
           {{"--model", "llama3-8b", "--finetune", "lora", "--base-dtype", "fp16"},
            "--base-dtype must be fp32 or bf16, got 'fp16'"},
           {{"--model", "llama3-8b", "--finetune", "lora", "--lora-dropout", "1"},
            "--lora-dropout must be in [0, 1), got 1"},
           {{"--model", "llama3-8b", "--finetune", "qlora"}, "--finetune must be full or lora"},
           {{"--model", "llama3-8b", "--finetune", "lora", "--lora-targets", "q,lm_head"},
            "'lm_head' is not a projection LoRA adapts"}}) {
    Outcome r = plan(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
  }
}

// With --tokens and the cluster's failure rate: the best layout's days with
// failures both ways, the simulation's spread, and the same as JSON fields.
TEST(PlanCommand, FailuresGiveGoodputAndSimulatedDays) {
  Outcome r = plan(with(kMegatron, {"--layout", "pp8,tp8,mb1,recompute", "--simulate-failures",
                                    "50", "--restart-seconds", "600"}));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* part :
       {"with failures, pp8,tp8,dp24,mb1,v1,1f1b,zero0,recompute on 1536 devices",
        "(Llama 3's 419 unexpected interruptions in 54 days on 16,384 H100s (assumed for this "
        "machine))",
        "a restart takes 10.0 min", "(Young/Daly), goodput ", "in-job recovery over 24 replicas",
        "simulated, 50 runs with failures drawn at that rate:", "checkpoint-restart: days p10 "})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  Outcome json = plan(with(kMegatron, {"--layout", "pp8,tp8,mb1,recompute", "--json"}));
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json line = nlohmann::json::parse(json.out);
  EXPECT_GT(line.at("days_with_failures_restart").get<double>(),
            line.at("days_with_failures_in_job").get<double>());
  EXPECT_GT(line.at("days_with_failures_in_job").get<double>(),
            line.at("days_to_train").get<double>());
  EXPECT_LT(line.at("goodput_restart").get<double>(), 1);
  // No rate, no section; bad figures named.
  Outcome none = plan(with(kMegatron, {"--layout", "pp8,tp8,mb1", "--failures-per-gpu-hour", "0"}));
  EXPECT_EQ(none.out.find("with failures"), std::string::npos) << none.out;
  Outcome negative = plan(with(kMegatron, {"--failures-per-gpu-hour", "-1"}));
  EXPECT_EQ(negative.code, 2);
  EXPECT_NE(negative.err.find("--failures-per-gpu-hour must be >= 0"), std::string::npos)
      << negative.err;
  Outcome untimed = plan({"--model", "gpt2-small", "--simulate-failures", "10"});
  EXPECT_EQ(untimed.code, 2);
  EXPECT_NE(untimed.err.find("--simulate-failures needs --tokens"), std::string::npos)
      << untimed.err;
}

TEST(PlanCommand, HelpListsTheFlags) {
  Outcome r = plan({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--global-batch"), std::string::npos);
  EXPECT_NE(r.out.find("--layout"), std::string::npos);
  for (const char* flag : {"--config", "--layers", "--hidden", "--heads", "--ffn", "--vocab",
                           "--architecture", "--kv-heads", "--max-cp", "--max-ep", "--moe-experts",
                           "--moe-top-k", "--moe-expert-ffn", "--moe-shared-experts", "--moe-every",
                           "--failures-per-gpu-hour", "--restart-seconds", "--simulate-failures"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace strata

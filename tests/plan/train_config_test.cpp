// strata plan --config: a strata train config file read by the planner.
#include "strata/plan/train_config.h"

#include <gtest/gtest.h>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

std::string configErrorOf(const std::string& text) {
  try {
    parseTrainConfigText(text, "run.toml");
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

TEST(TrainConfig, ReadsTheModelTheBatchThePrecisionAndTheLayout) {
  ConfiguredRun run = parseTrainConfigText(
      "[model]\nlayers = 8\nhidden = 256\nheads = 8\nffn = 1024\nvocab = 50257\n"
      "tied_embeddings = false\ncontext = 512\ndropout = 0.1\n"
      "[parallel]\npp = 2\ndp = 2\ntp = 2\nschedule = \"interleaved-1f1b\"\nvirtual_stages = 2\n"
      "zero = 1\nsequence_parallel = true\ncheckpoint_activations = true\n"
      "reshard_after_forward = false\n"
      "[train]\nseq_len = 256\nglobal_batch = 64\nmicro_batch = 2\nprecision = \"bf16\"\n"
      "lr = 3e-4\n[data]\nfiles = [\"a.txt\"]\n",
      "run.toml");
  const ModelDesc& m = run.model;
  EXPECT_EQ(m.name, "run.toml");
  EXPECT_EQ(m.layers, 8);
  EXPECT_EQ(m.hidden, 256);
  EXPECT_EQ(m.heads, 8);
  EXPECT_EQ(m.ffn, 1024);
  EXPECT_EQ(m.vocab, 50257);
  EXPECT_EQ(m.seqLen, 256);
  EXPECT_FALSE(m.tiedEmbeddings);
  EXPECT_EQ(toString(run.layout),
            "pp2,tp2,dp2,mb2,v2,interleaved-1f1b,zero1,recompute,sp,no-reshard");
  EXPECT_EQ(run.globalBatch, 64);
  EXPECT_EQ(run.dtype, Dtype::Bf16);
  // Autocast keeps fp32 weights, gradients and AdamW moments.
  EXPECT_EQ(run.precision.weightBytes, 4);
  EXPECT_EQ(run.precision.gradBytes, 4);
  EXPECT_EQ(run.precision.optimizerBytes, 8);
}

TEST(TrainConfig, KeysLeftOutTakeStrataTrainsDefaults) {
  ConfiguredRun run = parseTrainConfigText("# nothing set\n", "empty.toml");
  EXPECT_EQ(run.model.layers, 4);
  EXPECT_EQ(run.model.hidden, 128);
  EXPECT_EQ(run.model.heads, 4);
  EXPECT_EQ(run.model.ffn, 512);
  EXPECT_EQ(run.model.vocab, 256);
  EXPECT_EQ(run.model.seqLen, 128);
  EXPECT_TRUE(run.model.tiedEmbeddings);
  EXPECT_EQ(toString(run.layout), "pp1,tp1,dp1,mb4,v1,1f1b,zero0");
  EXPECT_EQ(run.globalBatch, 16);
  EXPECT_EQ(run.dtype, Dtype::Fp32);
}

TEST(TrainConfig, ReadsContextParallelism) {
  ConfiguredRun run = parseTrainConfigText(
      "[parallel]\ntp = 2\ncp = 4\ncp_algorithm = \"all-to-all\"\n[train]\nseq_len = 256\n",
      "run.toml");
  EXPECT_EQ(run.layout.cp, 4);
  EXPECT_EQ(run.layout.cpAlgorithm, CpAlgorithm::kAllToAll);
  EXPECT_EQ(toString(run.layout), "pp1,tp2,dp1,cp4,cp-a2a,mb4,v1,1f1b,zero0");
  EXPECT_EQ(parseTrainConfigText("parallel.cp_algorithm = \"ring\"\n", "a").layout.cpAlgorithm,
            CpAlgorithm::kRing);
  EXPECT_EQ(configErrorOf("[parallel]\ncp_algorithm = \"mesh\"\n"),
            "run.toml:2: parallel.cp_algorithm expects \"ring\" or \"all-to-all\", got string "
            "\"mesh\"");
  EXPECT_EQ(configErrorOf("[parallel]\ncp = 0\n"),
            "run.toml:2: parallel.cp expects a whole number from 1 to 2147483647, got integer 0");
}

TEST(TrainConfig, ReadsMixtureOfExpertsAndExpertParallelism) {
  ConfiguredRun run = parseTrainConfigText(
      "[model]\narchitecture = \"llama\"\nkv_heads = 2\n"
      "[model.moe]\nexperts = 8\ntop_k = 1\nexpert_ffn = 256\nshared_experts = 1\nevery = 2\n"
      "aux_loss_coeff = 0.02\ncapacity_factor = 1.25\n"
      "[parallel]\ndp = 4\nep = 4\nzero = 1\n",
      "moe.toml");
  const MoeDesc& moe = run.model.moe;
  EXPECT_EQ(moe.experts, 8);
  EXPECT_EQ(moe.topK, 1);
  EXPECT_EQ(moe.expertFfn, 256);
  EXPECT_EQ(moe.sharedExperts, 1);
  EXPECT_EQ(moe.every, 2);
  EXPECT_EQ(toString(run.layout), "pp1,tp1,dp4,ep4,mb4,v1,1f1b,zero1");
  // Left out, the table is strata train's defaults: dense, top 2, every layer.
  ConfiguredRun dense = parseTrainConfigText("", "dense.toml");
  EXPECT_FALSE(dense.model.moe.enabled());
  EXPECT_EQ(dense.model.moe.topK, 2);
  EXPECT_EQ(dense.model.moe.every, 1);
  EXPECT_EQ(dense.layout.ep, 1);
  EXPECT_EQ(configErrorOf("[model.moe]\ntop_k = 0\n"),
            "run.toml:2: model.moe.top_k expects a whole number from 1 to 2147483647, got "
            "integer 0");
  EXPECT_EQ(configErrorOf("[parallel]\nep = 0\n"),
            "run.toml:2: parallel.ep expects a whole number from 1 to 2147483647, got integer 0");
  // Only the llama family builds MoE layers.
  EXPECT_EQ(configErrorOf("model.moe.experts = 4\nmodel.moe.expert_ffn = 64\n"),
            "model 'run.toml': moe experts 4 on a GPT: only architecture llama has "
            "mixture-of-experts layers");
}

TEST(TrainConfig, DottedKeysAndInlineTablesReadAlike) {
  ConfiguredRun dotted = parseTrainConfigText("model.layers = 6\ntrain.seq_len = 64\n", "a");
  ConfiguredRun inline_ =
      parseTrainConfigText("model = { layers = 6 }\ntrain = { seq_len = 64 }\n", "b");
  EXPECT_EQ(dotted.model.layers, 6);
  EXPECT_EQ(inline_.model.layers, 6);
  EXPECT_EQ(dotted.model.seqLen, 64);
  EXPECT_EQ(inline_.model.seqLen, 64);
}

TEST(TrainConfig, BadValuesNameTheFileLineKeyAndValue) {
  EXPECT_EQ(configErrorOf("[model]\nlayers = 0\n"),
            "run.toml:2: model.layers expects a whole number from 1 to 2147483647, got integer 0");
  EXPECT_EQ(configErrorOf("[model]\nhidden = -64\n"),
            "run.toml:2: model.hidden expects a whole number from 1 to 2147483647, got integer "
            "-64");
  EXPECT_EQ(configErrorOf("[train]\nseq_len = 12.5\n"),
            "run.toml:2: train.seq_len expects a whole number from 1 to 2147483647, got float "
            "12.5");
  EXPECT_EQ(configErrorOf("[model]\nvocab = 3000000000\n"),
            "run.toml:2: model.vocab expects a whole number from 1 to 2147483647, got integer "
            "3000000000");
  EXPECT_EQ(configErrorOf("[parallel]\nzero = 4\n"),
            "run.toml:2: parallel.zero expects 0, 1, 2 or 3, got "
            "integer 4");
  EXPECT_EQ(configErrorOf("[train]\nprecision = \"fp16\"\n"),
            "run.toml:2: train.precision expects \"fp32\" or \"bf16\", got string \"fp16\"");
  EXPECT_EQ(configErrorOf("[parallel]\nsequence_parallel = 1\n"),
            "run.toml:2: parallel.sequence_parallel expects true or false, got integer 1");
  EXPECT_EQ(configErrorOf("[model]\nhidden = 100\nheads = 3\n"),
            "model 'run.toml': 3 heads do not divide hidden size 100");
  EXPECT_EQ(configErrorOf("[model\n").substr(0, 11), "run.toml:1:");
}

TEST(TrainConfig, ReadsTheLlamaFamily) {
  ConfiguredRun run = parseTrainConfigText(
      "[model]\narchitecture = \"llama\"\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\n"
      "ffn = 14336\nvocab = 128256\nrope_theta = 500000.0\nrms_norm_eps = 1e-5\n"
      "[train]\nseq_len = 8192\n",
      "llama.toml");
  const ModelDesc& m = run.model;
  EXPECT_EQ(m.family, Family::kLlama);
  EXPECT_EQ(m.kvHeads, 8);
  EXPECT_EQ(m.keyValueHeads(), 8);
  EXPECT_FALSE(m.tiedEmbeddings);  // llama's default when the file leaves it out
  EXPECT_DOUBLE_EQ(parameterCount(m), 8030261248.0);
}

TEST(TrainConfig, TiedEmbeddingsDefaultFollowsTheArchitecture) {
  EXPECT_TRUE(parseTrainConfigText("[model]\narchitecture = \"gpt2\"\n", "a").model.tiedEmbeddings);
  EXPECT_TRUE(
      parseTrainConfigText("[model]\narchitecture = \"strata\"\n", "a").model.tiedEmbeddings);
  // Given, the file's value wins, before or after the architecture.
  ConfiguredRun before = parseTrainConfigText(
      "[model]\ntied_embeddings = true\narchitecture = \"llama\"\n", "before.toml");
  EXPECT_TRUE(before.model.tiedEmbeddings);
  ConfiguredRun after = parseTrainConfigText(
      "model = { architecture = \"llama\", tied_embeddings = true }\n", "after.toml");
  EXPECT_TRUE(after.model.tiedEmbeddings);
  ConfiguredRun untiedGpt = parseTrainConfigText("[model]\ntied_embeddings = false\n", "gpt.toml");
  EXPECT_FALSE(untiedGpt.model.tiedEmbeddings);
}

TEST(TrainConfig, KvHeadsZeroOrLeftOutAreTheHeads) {
  ConfiguredRun zero =
      parseTrainConfigText("[model]\narchitecture = \"llama\"\nkv_heads = 0\n", "zero.toml");
  EXPECT_EQ(zero.model.keyValueHeads(), 4);
  ConfiguredRun absent = parseTrainConfigText("[model]\narchitecture = \"llama\"\n", "absent.toml");
  EXPECT_EQ(absent.model.keyValueHeads(), 4);
}

TEST(TrainConfig, BadLlamaValuesAreNamed) {
  EXPECT_EQ(configErrorOf("[model]\narchitecture = \"mamba\"\n"),
            "run.toml:2: model.architecture expects \"gpt2\", \"llama\" or \"strata\", got string "
            "\"mamba\"");
  EXPECT_EQ(configErrorOf("[model]\narchitecture = \"llama\"\nkv_heads = -2\n"),
            "run.toml:3: model.kv_heads expects a whole number from 0 to 2147483647, got integer "
            "-2");
  EXPECT_EQ(configErrorOf("[model]\narchitecture = \"llama\"\nheads = 4\nkv_heads = 3\n"),
            "model 'run.toml': kv-heads 3 do not divide the 4 heads");
  EXPECT_EQ(configErrorOf("[model]\nkv_heads = 2\n"),
            "model 'run.toml': kv-heads 2 differ from the 4 heads, which only architecture llama "
            "allows");
}

TEST(TrainConfig, AnUnreadableFileIsNamed) {
  try {
    loadTrainConfigFile("/nonexistent/run.toml");
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read config file '/nonexistent/run.toml'");
  }
}

}  // namespace
}  // namespace strata::plan

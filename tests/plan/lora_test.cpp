// The planner's LoRA (model_desc.h's LoraDesc): the adapters' parameters and
// FLOPs by hand, what a frozen base keeps, holds and computes, and the
// settings strata plan --config reads. tests/trainer's
// memory_prediction_test holds the predicted peaks against the trainer's.
#include <gtest/gtest.h>

#include "round_job.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/errors.h"
#include "strata/plan/memory.h"
#include "strata/plan/train_config.h"
#include "tiny_llama.h"

namespace strata::plan {
namespace {

ModelDesc withLora(ModelDesc m, std::vector<LoraTarget> targets, int rank = 2) {
  m.lora.enabled = true;
  m.lora.rank = rank;
  m.lora.targets = std::move(targets);
  return m;
}

const std::vector<LoraTarget> kAllTargets = {LoraTarget::kQ,   LoraTarget::kK,    LoraTarget::kV,
                                             LoraTarget::kO,   LoraTarget::kGate, LoraTarget::kUp,
                                             LoraTarget::kDown};

// Tiny llama: h 8, kv width 4 (2 kv heads of d 2), ffn 12; r 2.
TEST(Lora, AdapterParametersAndFlopsByHand) {
  ModelDesc m = withLora(tinyLlama(), {LoraTarget::kQ, LoraTarget::kV});
  // q: A 2x8 + B 8x2 = 32; v: A 2x8 + B 4x2 = 24.
  EXPECT_DOUBLE_EQ(loraLayerParameters(m, 1), 56);
  // tp 2 splits B's rows (column-parallel): q 16 + 8, v 16 + 4.
  EXPECT_DOUBLE_EQ(loraLayerParameters(m, 2), 44);
  // tp 4 replicates the 2 kv heads: v keeps A and B whole; q 16 + 4.
  EXPECT_DOUBLE_EQ(loraLayerParameters(m, 4), 20 + 24);
  // o and down are row-parallel: A's columns split, B whole. At tp 2,
  // o: A 2x4 + B 8x2 = 24; down: A 2x6 + B 8x2 = 28.
  ModelDesc rows = withLora(tinyLlama(), {LoraTarget::kO, LoraTarget::kDown});
  EXPECT_DOUBLE_EQ(loraLayerParameters(rows, 2), 24 + 28);
  // A token multiplies by every element of A and of the B rows it uses, 2
  // FLOPs each; at tp 4 a replicated v uses one kv head's 2 rows of B (4).
  EXPECT_DOUBLE_EQ(loraLayerForwardFlops(m, 1, 1), 2 * 4 * 56.0);
  EXPECT_DOUBLE_EQ(loraLayerForwardFlops(m, 1, 4), 2 * 4 * (20 + 16 + 4.0));
  EXPECT_DOUBLE_EQ(loraLayerParameters(tinyLlama(), 1), 0);  // no LoRA, no adapters
}

// An MoE layer adapts gate, up and down on each expert a rank holds (at
// expert_ffn 6) and on the shared experts' SwiGLU (1 x 6); a token runs its
// top 2 experts' adapters and the shared ones.
TEST(Lora, ExpertAdaptersByHand) {
  ModelDesc m = withLora(tinyLlama(), {LoraTarget::kQ, LoraTarget::kGate});
  m.moe.experts = 4;
  m.moe.topK = 2;
  m.moe.expertFfn = 6;
  m.moe.sharedExperts = 1;
  m.validate();
  // q: 32; gate: A 2x8 + B 6x2 = 28 an expert.
  EXPECT_DOUBLE_EQ(loraLayerParameters(m, 1, LayerKind::kMoe), 32 + 4 * 28 + 28);
  EXPECT_DOUBLE_EQ(loraLayerParameters(m, 1, LayerKind::kMoe, 2), 32 + 2 * 28 + 28);
  EXPECT_DOUBLE_EQ(loraLayerForwardFlops(m, 1, 1, LayerKind::kMoe), 2 * 4 * (32 + 2 * 28 + 28.0));
  // A dense layer of the same model adapts its own MLP (ffn 12): 16 + 24.
  EXPECT_DOUBLE_EQ(loraLayerParameters(m, 1), 32 + 40);
  // Dropout on the experts' adapters is strata train's refusal too.
  m.lora.dropout = true;
  EXPECT_THROW(m.validate(), PlanError);
}

// What a layer keeps a token when only the adapters train (2-byte values,
// sequence of 4, tp 1), against LlamaActivationsByHand's 304 bytes:
//   the two sums, in fp32 (no x/rms: the norms' weights are frozen)
//   [8]: 2 x 32 = 64; the attention norm's output, which q's and
//   v's A read, 16 (the MLP norm's is read by frozen gate and up only)
//   rotated Q, K and V expanded, 3 x 16 = 48 (o's input: o is frozen)
//   gate and up, 2 x 24 = 48 (their product is frozen down's input)
//   the kernel's output 16, its log-sum-exp 16, the norms' 1/rms 8
//   x A^T of q and of v, 2 x 2 x 2 = 8
// 224 bytes, with RoPE's tables (32) and the repeat's indices (64).
TEST(Lora, AFrozenBaseKeepsWhatTheAdaptersRead) {
  ModelDesc m = withLora(tinyLlama(), {LoraTarget::kQ, LoraTarget::kV});
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false), 4 * 224 + 32 + 64);
  // Every target: both norms' outputs, o's input and the product are read
  // by adapters again (304 - 2 x 16 of x/rms), and seven x A^T: 28.
  ModelDesc all = withLora(tinyLlama(), kAllTargets);
  EXPECT_DOUBLE_EQ(workingActivationBytes(all, 1, 1, false), 4 * (272 + 28) + 32 + 64);
}

// One process, fp32 state (strata train's 4 + 4 + 8): the base holds its
// weights alone, the adapters weights, gradients and AdamW's moments.
TEST(Lora, ModelStateIsTheFrozenBaseAndTheTrainedAdapters) {
  TrainingJob job;
  job.model = withLora(tinyLlama(), {LoraTarget::kQ, LoraTarget::kV});
  job.cluster = roundCluster(1, 1);
  job.globalBatch = 1;
  job.precision = {4, 4, 8, 4};
  Estimate e = evaluateLayout(job, parseLayout("pp1,tp1,dp1,mb1"));
  double adapters = 2 * 56, base = parameterCount(job.model);
  EXPECT_DOUBLE_EQ(e.rankMemory.at(0).optimizer, 8 * adapters);
  EXPECT_DOUBLE_EQ(e.rankMemory.at(0).parameters, 4 * (base + adapters));
  // ZeRO-1 over dp 2 shards the adapters' moments and keeps their flat copy.
  job.cluster = roundCluster(1, 2);
  job.globalBatch = 2;
  Estimate zero1 = evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb1,zero1"));
  EXPECT_DOUBLE_EQ(zero1.rankMemory.at(0).optimizer, 8 * adapters / 2);
  EXPECT_DOUBLE_EQ(zero1.rankMemory.at(0).parameters, 4 * (base + 2 * adapters));
  // ZeRO-3 shards the frozen base with the adapters; kept gathered through
  // the step (no-reshard), the rank holds every layer besides its shards.
  Estimate zero3 = evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb1,zero3,no-reshard"));
  EXPECT_DOUBLE_EQ(zero3.rankMemory.at(0).optimizer, 8 * adapters / 2);
  EXPECT_DOUBLE_EQ(zero3.rankMemory.at(0).parameters, 4 * (base + adapters) * (1.0 / 2 + 1));
  Estimate resharded = evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb1,zero3"));
  EXPECT_LT(resharded.rankMemory.at(0).parameters, zero3.rankMemory.at(0).parameters);
  // A bf16 base keeps each layer's projections (all but its two norms) in 2
  // bytes, whole on the rank or, under ZeRO-3, sharded over dp with the rest.
  job.model.lora.bf16Base = true;
  double projections =
      job.model.layers * (tpRankLayerParameters(job.model, LayerKind::kDense, 1, 1) - 2 * 8);
  Estimate bf16 = evaluateLayout(job, parseLayout("pp1,tp1,dp2,mb1,zero1"));
  EXPECT_DOUBLE_EQ(bf16.rankMemory.at(0).parameters, 4 * (base + 2 * adapters) - 2 * projections);
  Layout zero3Layout = parseLayout("pp1,tp1,dp2,mb1,zero3");
  EXPECT_EQ(checkLayout(job, zero3Layout), "");
  job.model.lora.bf16Base = false;
  double fp32Base = evaluateLayout(job, zero3Layout).rankMemory.at(0).parameters;
  job.model.lora.bf16Base = true;
  EXPECT_DOUBLE_EQ(evaluateLayout(job, zero3Layout).rankMemory.at(0).parameters,
                   fp32Base - 2 * projections / 2);
}

// The frozen base's backward makes its inputs' gradients only: a layer's
// weight matmuls run once in it rather than twice, the head's product too;
// the adapters run three times, as any trained weight.
TEST(Lora, TheBackwardSkipsTheBasesWeightGradients) {
  TrainingJob job = roundJob(1, 1, 1);
  job.model.family = Family::kLlama;
  job.model.vocab = 8;
  TrainingJob lora = job;
  lora.model = withLora(job.model, {LoraTarget::kQ, LoraTarget::kV}, 16);
  Layout layout = parseLayout("pp1,tp1,dp1,mb1");
  double achieved = job.cluster.achievedFlops(job.dtype);
  double perLayer = 3 * loraLayerForwardFlops(lora.model, 1, 1) -
                    tpRankWeightMatmulFlops(job.model, 1, 1, LayerKind::kDense);
  double expected = job.model.layers * perLayer - logitsForwardFlops(job.model, 1);
  double full = evaluateLayout(job, layout).time.compute;
  double adapted = evaluateLayout(lora, layout).time.compute;
  EXPECT_NEAR(adapted - full, expected / achieved, 1e-6 * full);
  EXPECT_LT(adapted, 0.8 * full);
}

TEST(Lora, ConfigFilesNameItAndWhatIsRefusedIsNamed) {
  ConfiguredRun run = parseTrainConfigText(
      "[model]\narchitecture = \"llama\"\nheads = 4\nkv_heads = 2\n"
      "[finetune]\nmethod = \"lora\"\nrank = 16\ntargets = [\"q\", \"o\", \"down\"]\nalpha = "
      "32.0\n",
      "sft.toml");
  EXPECT_TRUE(run.model.lora.enabled);
  EXPECT_EQ(run.model.lora.rank, 16);
  EXPECT_EQ(run.model.lora.targets,
            (std::vector<LoraTarget>{LoraTarget::kQ, LoraTarget::kO, LoraTarget::kDown}));
  EXPECT_FALSE(parseTrainConfigText("[model]\narchitecture = \"llama\"\n", "a").model.lora.enabled);
  EXPECT_FALSE(run.model.lora.dropout);
  EXPECT_TRUE(parseTrainConfigText("[model]\narchitecture = \"llama\"\n[finetune]\nmethod = "
                                   "\"lora\"\ndropout = 0.05\n",
                                   "sft.toml")
                  .model.lora.dropout);
  EXPECT_TRUE(parseTrainConfigText("[model]\narchitecture = \"llama\"\n[finetune]\nmethod = "
                                   "\"lora\"\nbase_dtype = \"bf16\"\n",
                                   "sft.toml")
                  .model.lora.bf16Base);
  auto errorOf = [](const std::string& text) -> std::string {
    try {
      parseTrainConfigText(text, "sft.toml");
    } catch (const PlanError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(errorOf("[finetune]\nmethod = \"lora\"\n").find("a GPT has none"), std::string::npos);
  EXPECT_NE(errorOf("[finetune]\nmethod = \"qlora\"\n").find("finetune.method"), std::string::npos);
  EXPECT_NE(errorOf("[model]\narchitecture = \"llama\"\n[finetune]\nmethod = \"lora\"\n"
                    "targets = [\"q\", \"lm_head\"]\n")
                .find("sft.toml:5: finetune.targets expects"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::plan

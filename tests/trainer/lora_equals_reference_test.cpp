// LoRA fine-tuning (finetune.method = "lora") in the layouts the adapters
// pass through differently, each against the independent reference
// (reference_llama.h with adapters, trained by reference_training.h), which
// trains only A and B of every adapted projection: every step's loss and
// gradient norm, and every parameter (the frozen base unchanged, the
// adapters' shards) after the compared steps.
//
//   one process; tensor parallel with sequence parallel (column-parallel
//   q, k, v, gate, up split their B, row-parallel o and down their A); kv
//   heads replicated over tp (each rank adapts its kv head's rows);
//   pipeline x tensor x data parallel; ZeRO-1, ZeRO-2 and ZeRO-3 (the
//   frozen base sharded, a frozen tied embedding too); interleaved and
//   zero-bubble V pipelines (whose W pass computes weight gradients apart);
//   dropout on the adapters' input (one process, tp 4 with sequence
//   parallel, pp 2 x dp 2 with checkpointing);
//   activation checkpointing; context parallel; a mixture of experts with
//   expert parallelism (adapters on the attention, the experts frozen; and
//   on the experts too, with tp and with ZeRO-3).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "reference_comparison.h"
#include "strata/config/validate_config.h"
#include "strata/error.h"
#include "strata/tensor_parallel/lora.h"
#include "strata/train/precision.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

const std::vector<std::string> kEveryProjection = {"q", "k", "v", "o", "gate", "up", "down"};

TrainConfig lora(TrainConfig c, std::vector<std::string> targets = kEveryProjection) {
  c.finetune.method = "lora";
  c.finetune.rank = 4;
  c.finetune.alpha = 8;
  c.finetune.targets = std::move(targets);
  // Adapters start with B = 0: a higher rate moves them enough in the
  // compared steps that A's gradients (zero while B is) matter too.
  c.train.lr = 1e-2;
  return c;
}

TEST(LoraEqualsReference, OneProcess) { expectEqualsReference("lora1", lora(tinyLlamaConfig(2))); }

TEST(LoraEqualsReference, Tp2SequenceParallel) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 1, 1, 1, 2);
  c.parallel.sequenceParallel = true;
  expectEqualsReference("loratp2sp", c);
}

TEST(LoraEqualsReference, Tp4KvHeadsReplicated) {
  expectEqualsReference("loratp4", withLayout(lora(tinyLlamaConfig(2)), 1, 1, 1, 4));
}

TEST(LoraEqualsReference, Pp2Tp2Dp2OneFOneB) {
  expectEqualsReference("lorapp2tp2dp2", withLayout(lora(tinyLlamaConfig(2)), 2, 2, 1, 2));
}

TEST(LoraEqualsReference, Dp2Zero1) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 1, 2, 1, 1);
  c.parallel.zero = 1;
  expectEqualsReference("loraz1", c);
}

TEST(LoraEqualsReference, Dp2Tp2Zero2) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 1, 2, 1, 2);
  c.parallel.zero = 2;
  expectEqualsReference("loraz2", c);
}

// Dropout on the adapters' input draws the masks one process draws: the
// whole input's on a column-parallel or replicated projection, the rank's
// columns of it on a row-parallel one, each micro-batch's by its global
// index (data parallel), again alike when a checkpointed stage recomputes.
TEST(LoraEqualsReference, OneProcessDropout) {
  TrainConfig c = lora(tinyLlamaConfig(2));
  c.finetune.dropout = 0.25;
  expectEqualsReference("loradrop1", c);
}

TEST(LoraEqualsReference, Tp4SequenceParallelDropout) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 1, 1, 1, 4);
  c.parallel.sequenceParallel = true;
  c.finetune.dropout = 0.25;
  expectEqualsReference("loradroptp4", c);
}

TEST(LoraEqualsReference, Pp2Dp2CheckpointingDropout) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 2, 2, 1, 1);
  c.parallel.checkpointActivations = true;
  c.finetune.dropout = 0.25;
  expectEqualsReference("loradroppp2dp2", c);
}

// ZeRO-3 shards the frozen base with the adapters: each layer's frozen
// weights are released once its backward has passed its input.
TEST(LoraEqualsReference, Dp2Tp2Zero3Checkpointing) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 1, 2, 1, 2);
  c.parallel.zero = 3;
  c.parallel.checkpointActivations = true;
  expectEqualsReference("loraz3", c);
}

// The frozen tied embedding is a unit of its own on rank 0, gathered for the
// embedding and the head; DualPipeV's W passes walk the graph apart from
// its input's.
TEST(LoraEqualsReference, Pp2Dp2DualPipeVZero3Tied) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 2, 2, 1, 1);
  c.model.tiedEmbeddings = true;
  c.parallel.schedule = "dualpipe-v";
  c.parallel.zero = 3;
  c.train.microBatch = 1;
  c.train.globalBatch = 8;
  expectEqualsReference("loraz3dpv", c);
}

TEST(LoraEqualsReference, Pp2InterleavedCheckpointing) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 2, 1, 1, 1);
  c.parallel.schedule = "interleaved-1f1b";
  c.parallel.virtualStages = 2;
  c.parallel.checkpointActivations = true;
  expectEqualsReference("lorapp2int", c);
}

TEST(LoraEqualsReference, Pp2ZeroBubbleV) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 2, 1, 1, 1);
  c.parallel.schedule = "zb-v";
  c.train.microBatch = 1;
  c.train.globalBatch = 4;
  expectEqualsReference("lorazbv", c);
}

TEST(LoraEqualsReference, Cp2Dp2Ring) {
  expectEqualsReference("loracp2dp2", withLayout(lora(tinyLlamaConfig(2)), 1, 2, 2, 1));
}

TEST(LoraEqualsReference, MixtureOfExpertsEp2) {
  TrainConfig c = withLayout(lora(tinyMoeConfig(), {"q", "k", "v", "o"}), 1, 2, 1, 1);
  c.parallel.ep = 2;
  expectEqualsReference("loramoe", c);
}

// Adapters on every expert's gate, up and down: each expert's split over tp
// as its weights, held by its ep rank.
TEST(LoraEqualsReference, MixtureOfExpertsAdaptedEp2Tp2) {
  TrainConfig c = withLayout(lora(tinyMoeConfig()), 1, 2, 1, 2);
  c.parallel.ep = 2;
  expectEqualsReference("loramoeexperts", c);
}

// And on the shared experts' SwiGLU, which every token runs.
TEST(LoraEqualsReference, MixtureOfExpertsSharedAdaptedEp2) {
  TrainConfig c = withLayout(lora(tinyMoeConfig()), 1, 2, 1, 1);
  c.model.moe.sharedExperts = 1;
  c.parallel.ep = 2;
  expectEqualsReference("loramoeshared", c);
}

// ZeRO-3's expert units: each expert's frozen weights and adapters, sharded
// over the experts' replicas.
TEST(LoraEqualsReference, MixtureOfExpertsAdaptedEp2Zero3) {
  TrainConfig c = withLayout(lora(tinyMoeConfig(), {"q", "v", "gate", "down"}), 1, 4, 1, 1);
  c.parallel.ep = 2;
  c.parallel.zero = 3;
  expectEqualsReference("loramoez3", c);
}

// train.precision = "bf16": the run under bf16 autocast against the
// reference under the same autocast, one process and pp 2 x tp 2, within
// bf16's tolerances (reference_comparison.cpp). Needs a CPU that strata
// train runs bf16 on.
TrainConfig bf16(TrainConfig c) {
  c.train.precision = "bf16";
  return c;
}

bool bf16Supported() {
  try {
    checkPrecisionSupported("bf16");
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

TEST(LoraEqualsReference, OneProcessBf16) {
  if (!bf16Supported()) GTEST_SKIP() << "no native bf16 on this CPU";
  expectEqualsReference("lorabf16", bf16(lora(tinyLlamaConfig(2))));
}

TEST(LoraEqualsReference, Pp2Tp2Bf16) {
  if (!bf16Supported()) GTEST_SKIP() << "no native bf16 on this CPU";
  expectEqualsReference("lorabf16pp2tp2", bf16(withLayout(lora(tinyLlamaConfig(2)), 2, 1, 1, 2)));
}

// finetune.base_dtype = "bf16" keeps the frozen projections in bf16. Under
// bf16 autocast, which computes them in bf16 anyway, the run trains as the
// one whose base stays fp32, step for step and adapter for adapter, each
// projection the fp32 one rounded, in half its bytes: in pp 2 x tp 2, and
// under ZeRO-3 (dp 2 x tp 2), whose units shard the bf16 projections and
// the fp32 norms in a flat buffer each. Needs a CPU that strata train runs
// bf16 on.
void expectBf16BaseTrainsAsFp32(const std::string& name, const TrainConfig& layout) {
  try {
    checkPrecisionSupported("bf16");
  } catch (const ConfigError& e) {
    GTEST_SKIP() << e.what();
  }
  std::string dir = sharedDir(name);
  TrainConfig base = layout;
  base.train.precision = "bf16";
  for (std::string dtype : {"fp32", "bf16"}) {
    TrainConfig c = base;
    c.finetune.baseDtype = dtype;
    strata::testing::runInProcesses(
        4,
        [&](const strata::testing::RankContext& rank) {
          Trainer trainer(c, World::init());
          writeValues(dir, dtype, rank.rank, trainSteps(trainer, 4));
          std::filesystem::create_directories(dir + "/" + dtype);
          writeShards(dir + "/" + dtype, rank.rank, trainer);
        },
        sharedDirOptions(dir));
  }
  int projections = 0;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<double> fp32 = readValues(dir, "fp32", rank), bf16 = readValues(dir, "bf16", rank);
    ASSERT_EQ(fp32.size(), bf16.size());
    for (size_t step = 0; step < fp32.size(); ++step)
      EXPECT_NEAR(bf16[step], fp32[step], 1e-6 * std::abs(fp32[step])) << "step " << step;
    std::vector<ParameterShard> a = readShards(dir + "/fp32", rank).shards;
    std::vector<ParameterShard> b = readShards(dir + "/bf16", rank).shards;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      bool projection = tensor_parallel::isProjectionWeight(b[i].name);
      projections += projection;
      EXPECT_EQ(b[i].tensor.scalar_type(), projection ? at::kBFloat16 : at::kFloat) << b[i].name;
      at::Tensor expected = projection ? a[i].tensor.to(at::kBFloat16) : a[i].tensor;
      EXPECT_TRUE(torch::allclose(b[i].tensor.to(at::kFloat), expected.to(at::kFloat), 1e-5, 1e-7))
          << "rank " << rank << ", " << b[i].name;
    }
  }
  // Each rank's tp slice of q, k, v, o, gate, up, down in each block it holds.
  const int64_t blocksPerRank = layout.model.layers / layout.parallel.pp;
  EXPECT_EQ(projections, 4 * blocksPerRank * 7);
  removeSharedDir(dir);
}

TEST(LoraBf16Base, TrainsAsTheFp32BaseUnderAutocast) {
  expectBf16BaseTrainsAsFp32("lora_bf16_base", withLayout(lora(tinyLlamaConfig(2)), 2, 1, 1, 2));
}

TEST(LoraBf16Base, Zero3ShardsTheBf16Base) {
  TrainConfig c = withLayout(lora(tinyLlamaConfig(2)), 1, 2, 1, 2);
  c.parallel.zero = 3;
  expectBf16BaseTrainsAsFp32("lora_bf16_zero3", c);
}

// What LoRA does not take yet, and bad settings, are refused by name.
TEST(LoraConfig, RefusesWhatItDoesNotTakeByName) {
  auto refusal = [](TrainConfig c) -> std::string {
    try {
      validateConfig(
          c, static_cast<int>(c.parallel.pp * c.parallel.dp * c.parallel.cp * c.parallel.tp));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "accepted";
  };
  auto expectNamed = [&](const TrainConfig& c, const std::string& part) {
    std::string said = refusal(c);
    EXPECT_NE(said.find(part), std::string::npos) << said;
  };
  TrainConfig good = lora(tinyLlamaConfig(2));
  EXPECT_EQ(refusal(good), "accepted");
  TrainConfig c = good;
  c.finetune.targets = {"q", "wq"};
  expectNamed(c, "'wq' is not a projection LoRA adapts");
  c = good;
  c.finetune.rank = 0;
  expectNamed(c, "finetune.rank must be >= 1, got 0");
  c = good;
  c.finetune.dropout = 1;
  expectNamed(c, "finetune.dropout must be in [0, 1), got 1");
  c = withLayout(good, 1, 1, 2, 1);
  c.finetune.dropout = 0.1;
  expectNamed(c, "finetune.dropout 0.1 with cp 2: the adapters' dropout masks");
  c = lora(tinyConfig());
  expectNamed(c, "model.architecture = strata has none");
  c = lora(tinyMoeConfig());
  c.finetune.dropout = 0.1;
  expectNamed(c, "finetune.dropout 0.1 with targets gate, up or down on a mixture-of-experts");
  c = good;
  c.finetune.baseDtype = "bf16";
  expectNamed(c, "finetune.base_dtype = \"bf16\" needs train.precision = \"bf16\"");
  c.train.precision = "bf16";
  EXPECT_EQ(refusal(c), "accepted");
  c = withLayout(c, 1, 2, 1, 1);
  c.parallel.zero = 3;
  EXPECT_EQ(refusal(c), "accepted");
  c = good;
  c.finetune.baseDtype = "fp16";
  expectNamed(c, "finetune.base_dtype must be fp32 or bf16, got 'fp16'");
  c = good;
  c.finetune.method = "qlora";
  expectNamed(c, "finetune.method must be full or lora, got 'qlora'");
}

}  // namespace
}  // namespace strata::train::testing

// Mixture-of-experts Llama models in and out of Mixtral's Hugging Face
// format: `strata export` of a checkpoint trained with its experts split
// over ep 2 writes MixtralForCausalLM (the router as block_sparse_moe.gate,
// expert J's gate, down and up as experts.J.w1, w2, w3), read back by the
// independent safetensors reader and run by a forward that follows
// modeling_mixtral (independent_llama.h); `--init-from` of that file puts
// every expert on the rank that holds it; MoE models the format cannot
// hold are refused naming the setting; LoRA on the experts exports merged.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "independent_gpt2.h"
#include "independent_llama.h"
#include "llama_logits_check.h"
#include "strata/error.h"
#include "strata/models/model_family.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

// Mixtral's layout: an MoE MLP in every block.
TrainConfig mixtralConfig(int64_t dp, int64_t ep) {
  TrainConfig c = tinyMoeConfig();
  c.model.moe.every = 1;
  c.parallel.dp = dp;
  c.parallel.ep = ep;
  return c;
}

// Mixtral's names for block i's MLP, written out here.
std::map<std::string, std::string> mixtralNamesOf(const ModelConfig& m) {
  std::map<std::string, std::string> names;
  for (int64_t i = 0; i < m.layers; ++i) {
    std::string theirs = "model.layers." + std::to_string(i) + ".block_sparse_moe.";
    std::string ours = "block" + std::to_string(i) + ".mlp.";
    names[theirs + "gate.weight"] = ours + "router.weight";
    for (int64_t j = 0; j < m.moe.experts; ++j) {
      std::string e = std::to_string(j);
      names[theirs + "experts." + e + ".w1.weight"] = ours + "experts." + e + ".gate.weight";
      names[theirs + "experts." + e + ".w2.weight"] = ours + "experts." + e + ".down.weight";
      names[theirs + "experts." + e + ".w3.weight"] = ours + "experts." + e + ".up.weight";
    }
  }
  return names;
}

TEST(MixtralExport, HoldsEveryExpertUnderMixtralNamesWithItsConfig) {
  std::string dir = sharedDir("mixtral_export");
  std::string file = trainAndExportTo(dir, mixtralConfig(2, 2));
  RawSafetensors raw = readSafetensorsIndependently(file);
  TensorMap ours = checkpointWeightsOf(dir, mixtralConfig(1, 1));
  ModelConfig m = mixtralConfig(1, 1).model;
  for (const auto& [theirs, strata] : mixtralNamesOf(m)) {
    auto found = raw.tensors.find(theirs);
    ASSERT_NE(found, raw.tensors.end()) << theirs;
    EXPECT_TRUE(torch::equal(found->second.value, ours.at(strata))) << theirs;
  }
  EXPECT_EQ(raw.tensors.at("model.layers.0.block_sparse_moe.experts.3.w2.weight").shape,
            (std::vector<int64_t>{m.hidden, m.moe.expertFfn}));
  EXPECT_EQ(raw.tensors.count("model.layers.0.mlp.gate_proj.weight"), 0u);
  nlohmann::json config;
  std::ifstream(dir + "/hf/config.json") >> config;
  EXPECT_EQ(config["architectures"][0], "MixtralForCausalLM");
  EXPECT_EQ(config["model_type"], "mixtral");
  EXPECT_EQ(config["num_local_experts"], m.moe.experts);
  EXPECT_EQ(config["num_experts_per_tok"], m.moe.topK);
  EXPECT_EQ(config["intermediate_size"], m.moe.expertFfn);
  removeSharedDir(dir);
}

// modeling_mixtral's forward on the exported files gives Strata's logits.
TEST(MixtralExport, HuggingFaceForwardGivesStrataLogits) {
  std::string dir = sharedDir("mixtral_logits");
  std::string file = trainAndExportTo(dir, mixtralConfig(2, 2));
  TrainConfig config = mixtralConfig(1, 1);
  TensorMap weights = checkpointWeightsOf(dir, config);
  RawSafetensors raw = readSafetensorsIndependently(file);
  torch::nn::Sequential model = oneProcessModel(config, weights);
  torch::Tensor ids = torch::randint(0, 256, {3, 16}, torch::kLong);
  expectHuggingFaceLogits(model, dir + "/hf", raw.tensors, ids);
  removeSharedDir(dir);
}

// Read back into ep 2 (each rank its two experts) and into one process.
TEST(MixtralExport, ImportPutsEachExpertOnItsRank) {
  std::string dir = sharedDir("mixtral_import");
  std::string file = trainAndExportTo(dir, mixtralConfig(2, 2));
  TensorMap whole = checkpointWeightsOf(dir, mixtralConfig(1, 1));
  for (int64_t ep : {2, 1}) {
    TrainConfig config = mixtralConfig(2, ep);
    config.checkpoint.initFrom = file;
    strata::testing::runInProcesses(
        2,
        [&](const strata::testing::RankContext&) {
          Trainer trainer(config, World::init());
          trainer.initFrom(file);
          int held = 0;
          for (const ParameterShard& shard : trainer.parameterShards()) {
            EXPECT_TRUE(torch::equal(shard.tensor, whole.at(shard.name))) << shard.name;
            held += shard.name.find(".experts.") != std::string::npos;
          }
          EXPECT_EQ(held, 3 * 4 * 4 / ep);  // 3 weights of 4 / ep experts in 4 blocks
        },
        sharedDirOptions(dir));
  }
  removeSharedDir(dir);
}

// LoRA adapters on every projection, the experts' too, trained at ep 2:
// --merge-adapter folds each expert's adapters into its weights, so
// Mixtral's forward of the merged file gives the adapted model's logits
// (PEFT's format: peft_reference_test.cpp).
TrainConfig withExpertAdapters(TrainConfig c) {
  c.finetune.method = "lora";
  c.finetune.rank = 4;
  c.finetune.alpha = 8;
  c.finetune.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  c.train.lr = 1e-2;  // B moves off zero in the three steps
  return c;
}

TEST(MixtralExport, MergedExpertAdaptersGiveTheAdaptedLogits) {
  std::string dir = sharedDir("mixtral_lora_merge");
  TrainConfig config = withExpertAdapters(mixtralConfig(2, 2));
  config.checkpoint.dir = dir + "/ckpt";
  strata::testing::runInProcesses(
      2,
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, 3);
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  ExportOptions merged{config.checkpoint.dir, "safetensors", dir + "/hf/model.safetensors"};
  merged.mergeAdapter = true;
  exportCheckpoint(merged);

  TrainConfig one = withExpertAdapters(mixtralConfig(1, 1));
  torch::nn::Sequential model = oneProcessModel(one, checkpointWeightsOf(dir, one));
  RawSafetensors raw = readSafetensorsIndependently(merged.out);
  torch::Tensor ids = torch::randint(0, 256, {3, 16}, torch::kLong);
  torch::Tensor hf = expectHuggingFaceLogits(model, dir + "/hf", raw.tensors, ids);
  // The adapters moved the model: the base alone gives other logits.
  torch::NoGradGuard noGrad;
  TensorMap base = checkpointWeightsOf(dir, one);
  for (auto it = base.begin(); it != base.end();)
    it = it->first.find("lora_") == std::string::npos ? std::next(it) : base.erase(it);
  torch::Tensor plain = oneProcessModel(mixtralConfig(1, 1), base)->forward(ids).transpose(0, 1);
  EXPECT_GT(((plain - hf).norm() / hf.norm()).item<double>(), 1e-3);
  removeSharedDir(dir);
}

void expectRefusalNaming(const models::ModelFamily& family, const models::ModelSpec& spec,
                         const std::vector<std::string>& parts) {
  try {
    family.huggingFace(spec);
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(MixtralExport, ModelsMixtralsFormatCannotHoldAreRefusedByName) {
  models::ModelSpec spec = modelSpecOf(mixtralConfig(1, 1));
  const models::ModelFamily& family = models::modelFamily(spec.architecture);
  spec.moe.every = 2;
  expectRefusalNaming(family, spec, {"MixtralForCausalLM", "model.moe.every = 2"});
  spec.moe.every = 1;
  spec.moe.sharedExperts = 1;
  expectRefusalNaming(family, spec, {"model.moe.shared_experts = 1"});
  spec.moe.sharedExperts = 0;
  spec.moe.normalizeTopK = false;
  expectRefusalNaming(family, spec, {"model.moe.normalize_top_k = false"});
  models::ModelSpec gpt2 = spec;
  gpt2.architecture = "gpt2";
  expectRefusalNaming(models::modelFamily("gpt2"), gpt2,
                      {"GPT2LMHeadModel", "has no mixture of experts"});
}

}  // namespace
}  // namespace strata::train::testing

// Strata's LoRA adapters against Hugging Face's PEFT library, in PEFT's
// format both ways: an adapter PEFT made loads into pp 2 x tp 2 and gives
// PEFT's logits (and Strata's greedy generation PEFT's tokens); one Strata
// trained, exported with --format peft, runs in PeftModel with the
// checkpoint's logits, and exported with --merge-adapter in transformers
// alone; a Mixtral's experts' adapters go both ways through PEFT's
// target_parameters. The PEFT side is reference/peft_reference.py, run
// offline by the project's Python as the transformers tests run theirs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "project_python.h"
#include "strata/checkpoint/export_hugging_face.h"
#include "strata/config/init_from_model.h"
#include "strata/inference/generate.h"
#include "strata/tensor_parallel/lora.h"
#include "strata/tensor_parallel/sharding.h"
#include "trainer_test_util.h"
#include "transformers_checks.h"

namespace strata::train::testing {
namespace {

using strata::testing::inRankProcess;

void runPeftReference(const std::vector<std::string>& args) {
  runPythonScript(STRATA_PEFT_REFERENCE, args);
}

// PeftModel.from_pretrained of the adapter in dir/adapter on the base in
// made/model, run on `ids` (written to dir/ids.json): its logits [b, s, V],
// once PEFT loaded `keys` adapter tensors, none missing, none left over.
torch::Tensor peftModelLogits(const std::string& made, const std::string& dir,
                              const torch::Tensor& ids, size_t keys) {
  writeIds(dir + "/ids.json", ids);
  runPeftReference({"run", made + "/model", dir + "/adapter", dir + "/ids.json", dir + "/peft"});
  if (::testing::Test::HasFatalFailure()) return {};
  nlohmann::json report = readJson(dir + "/peft/report.json");
  EXPECT_EQ(report["adapter_keys"].size(), keys);
  EXPECT_TRUE(report["missing"].empty()) << report["missing"].dump();
  EXPECT_TRUE(report["unexpected"].empty()) << report["unexpected"].dump();
  return logitsAt(dir + "/peft/logits.safetensors");
}

// The LoRA run of transformers' Llama at `base`: the model from its
// config.json, adapters of rank 4 and alpha 8 on every projection, in
// pp 2 x tp 2.
TrainConfig loraRunOf(const std::string& base) {
  TrainConfig config = tinyConfig();
  config.parallel.pp = 2;
  config.parallel.tp = 2;
  config.checkpoint.initFrom = base;
  takeModelFromInitFrom(config, {});
  config.finetune.method = "lora";
  config.finetune.rank = 4;
  config.finetune.alpha = 8;
  config.finetune.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  return config;
}

// An adapter PEFT made (every projection, A and B drawn) on transformers'
// Llama, read with --init-from and --init-adapter into pp 2 x tp 2: the
// adapted model's logits are PEFT's, and `strata generate --adapter`
// continues a prompt as PEFT's model does.
TEST(PeftReference, PeftAdapterLoadsIntoPp2Tp2) {
  std::string dir = sharedDir("peft_adapter_import");
  std::string made = dir + "/made";
  if (!inRankProcess()) {
    ASSERT_NO_FATAL_FAILURE(runPeftReference({"make", made}));
  }
  nlohmann::json report = readJson(made + "/report.json");
  torch::Tensor ids = idsOf(report);
  TrainConfig config = loraRunOf(made + "/model");
  config.finetune.initAdapter = made + "/adapter";
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainer.initFrom(config.checkpoint.initFrom);
        trainer.initAdapter(config.finetune.initAdapter);
        writeLogitsShare(dir, trainer, pipelineLogits(trainer, ids));
      },
      sharedDirOptions(dir));
  std::cout << "peft " << report["versions"]["peft"].get<std::string>() << std::endl;
  torch::Tensor peft = logitsAt(made + "/logits.safetensors");
  expectSameLogits(joinedLogits(dir, config.model.vocab), peft,
                   "a PEFT adapter on LlamaForCausalLM, in pp 2 x tp 2");
  // The adapter matters: the base alone gives other logits.
  torch::Tensor base = logitsAt(made + "/base_logits.safetensors");
  EXPECT_GT((peft - base).abs().max().item<double>(), 100 * kTolerance);

  // strata generate --weights BASE --adapter ADAPTER continues the prompt as
  // PEFT's model does, greedily.
  GenerateOptions greedy;
  greedy.weights = made + "/model";
  greedy.adapter = made + "/adapter";
  expectGreedyContinuation(greedy, report, "PEFT");
  removeSharedDir(dir);
}

// Every adapter shard moved off its start (B begins at zero), alike on the
// ranks that hold the same shard, as moveOffTheInitialScale moves weights.
void moveAdapters(const Trainer& trainer) {
  torch::NoGradGuard noGrad;
  for (const ParameterShard& shard : trainer.parameterShards()) {
    if (!tensor_parallel::isLoraParameter(shard.name)) continue;
    uint64_t seed = std::hash<std::string>{}(shard.name);
    if (shard.shardDim != tensor_parallel::kReplicated) seed += 1 + trainer.groups().coord.tp;
    at::Generator generator = at::detail::createCPUGenerator(seed);
    shard.tensor.add_(0.3 * torch::randn(shard.tensor.sizes(), generator));
  }
}

// A LoRA run from transformers' Llama, trained in pp 2 x tp 2, exported with
// --format peft: PeftModel.from_pretrained on the base gives the
// checkpoint's logits; exported with --merge-adapter, LlamaForCausalLM alone
// gives them too.
TEST(PeftReference, ExportedAdapterRunsInPeftModel) {
  std::string dir = sharedDir("peft_adapter_export");
  std::string made = dir + "/made";
  if (!inRankProcess()) {
    ASSERT_NO_FATAL_FAILURE(runPeftReference({"make", made}));
  }
  TrainConfig config = loraRunOf(made + "/model");
  config.checkpoint.dir = dir + "/ckpt";
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainer.initFrom(config.checkpoint.initFrom);
        trainSteps(trainer, 3);
        moveAdapters(trainer);
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  ExportOptions adapter{config.checkpoint.dir, "peft", dir + "/adapter"};
  exportCheckpoint(adapter);
  ExportOptions merged{config.checkpoint.dir, "safetensors", dir + "/merged/model.safetensors"};
  merged.mergeAdapter = true;
  exportCheckpoint(merged);

  TrainConfig oneProcess = config;
  oneProcess.parallel = ParallelConfig{};
  torch::nn::Sequential model = oneProcessModel(oneProcess, checkpointWeightsOf(dir, oneProcess));
  at::Generator generator = at::detail::createCPUGenerator(5);
  torch::Tensor ids = torch::randint(0, config.model.vocab, {2, 16}, generator, torch::kLong);
  torch::Tensor peft;
  ASSERT_NO_FATAL_FAILURE(peft = peftModelLogits(made, dir, ids, 2u * 7u * config.model.layers));

  torch::NoGradGuard noGrad;
  torch::Tensor strata = model->forward(ids).transpose(0, 1);  // [b, s, V]
  expectSameLogits(strata, peft, "Strata's adapter (pp 2 x tp 2) in PeftModel");
  ASSERT_NO_FATAL_FAILURE(
      runReference({"export", dir + "/merged", dir + "/ids.json", dir + "/transformers"}));
  expectSameLogits(strata, logitsAt(dir + "/transformers/logits.safetensors"),
                   "the merged export in LlamaForCausalLM");
  removeSharedDir(dir);
}

// A Mixtral's experts' adapters in PEFT's target_parameters form. An
// adapter PEFT made (every projection; experts.gate_up_proj at rank 4, so
// gate and up share its A) loads into pp 2 x tp 2, every expert's B split
// over tp, and gives PEFT's logits; the run then trains on, and its
// --format peft export (gate's and up's adapters side by side at rank 8)
// runs in PeftModel with the checkpoint's logits.
TEST(PeftReference, MixtralExpertAdaptersBothWays) {
  std::string dir = sharedDir("peft_mixtral");
  std::string made = dir + "/made";
  if (!inRankProcess()) {
    ASSERT_NO_FATAL_FAILURE(runPeftReference({"make", made, "mixtral"}));
  }
  nlohmann::json report = readJson(made + "/report.json");
  torch::Tensor ids = idsOf(report);
  TrainConfig config = loraRunOf(made + "/model");
  ASSERT_TRUE(config.model.moe.enabled());
  config.finetune.initAdapter = made + "/adapter";
  config.checkpoint.dir = dir + "/ckpt";
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainer.initFrom(config.checkpoint.initFrom);
        trainer.initAdapter(config.finetune.initAdapter);
        writeLogitsShare(dir, trainer, pipelineLogits(trainer, ids));
        trainSteps(trainer, 2);
        moveAdapters(trainer);
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  torch::Tensor peft = logitsAt(made + "/logits.safetensors");
  expectSameLogits(joinedLogits(dir, config.model.vocab), peft,
                   "a PEFT adapter on MixtralForCausalLM's experts, in pp 2 x tp 2");
  EXPECT_GT((peft - logitsAt(made + "/base_logits.safetensors")).abs().max().item<double>(),
            100 * kTolerance);

  exportCheckpoint({config.checkpoint.dir, "peft", dir + "/adapter"});
  nlohmann::json written = readJson(dir + "/adapter/adapter_config.json");
  EXPECT_EQ(written["target_parameters"],
            nlohmann::json({"experts.gate_up_proj", "experts.down_proj"}));
  EXPECT_EQ(written["rank_pattern"]["gate_up_proj"], 8);
  TrainConfig oneProcess = config;
  oneProcess.parallel = ParallelConfig{};
  torch::nn::Sequential model = oneProcessModel(oneProcess, checkpointWeightsOf(dir, oneProcess));
  // Per block: q, k, v, o and the two fused expert tensors, A and B each.
  torch::Tensor exported;
  ASSERT_NO_FATAL_FAILURE(exported =
                              peftModelLogits(made, dir, ids, 2u * 6u * config.model.layers));
  torch::NoGradGuard noGrad;
  torch::Tensor strata = model->forward(ids).transpose(0, 1);  // [b, s, V]
  expectSameLogits(strata, exported, "Strata's experts' adapters (pp 2 x tp 2) in PeftModel");
  // Training moved them: PEFT's own adapter no longer gives these logits.
  EXPECT_GT((strata - peft).abs().max().item<double>(), 100 * kTolerance);
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

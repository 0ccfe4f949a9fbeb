// Strata's Hugging Face conversion against Hugging Face's own code, not
// against a forward written for the tests: transformers runs what `strata
// export` wrote (GPT2LMHeadModel, LlamaForCausalLM, MixtralForCausalLM) and
// must give Strata's logits, and safetensors' reader must find in the file
// the tensors transformers itself writes for that model; models that
// transformers made and saved load with --init-from into pp 2 x tp 2 and
// give transformers' logits, and Strata's greedy generation continues a
// prompt as transformers' generate() does.
//
// The transformers side is reference/transformers_reference.py, run offline
// by the project's Python (scripts/python-env.sh; the fixture
// TransformersReference.Install makes the environment). It writes what
// transformers computed into the test's folder; the comparisons are here,
// with transformers_checks.h's helpers.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "independent_gpt2.h"
#include "project_python.h"
#include "strata/checkpoint/export_hugging_face.h"
#include "strata/config/init_from_model.h"
#include "strata/formats/safetensors.h"
#include "strata/inference/generate.h"
#include "strata/models/model_family.h"
#include "strata/pipeline/pipeline.h"
#include "strata/tensor_parallel/lora.h"
#include "strata/tensor_parallel/sharding.h"
#include "trainer_test_util.h"
#include "transformers_checks.h"

namespace strata::train::testing {
namespace {

using strata::testing::inRankProcess;

// --- export: transformers runs what `strata export` wrote -----------------

// Three steps leave a model at its initial scale: matrices of 0.02, norms at
// 1, biases at 0, where attention is near uniform and GELU near linear, so
// that another GELU, rotary convention or head order would move the logits
// by less than the tolerance. Every matrix is scaled by 10 and every vector
// moved by N(0, 0.2^2); the noise is drawn from the parameter's name (and
// for a tp-split vector its tp rank), so that ranks holding the same tensor
// (tp or dp replicas, a tied weight's two stages) move it alike.
void moveOffTheInitialScale(const Trainer& trainer) {
  torch::NoGradGuard noGrad;
  for (const ParameterShard& shard : trainer.parameterShards()) {
    if (shard.tensor.dim() >= 2) {
      shard.tensor.mul_(10);
      continue;
    }
    uint64_t seed = std::hash<std::string>{}(shard.name);
    if (shard.shardDim != tensor_parallel::kReplicated) seed += 1 + trainer.groups().coord.tp;
    at::Generator generator = at::detail::createCPUGenerator(seed);
    shard.tensor.add_(0.2 * torch::randn(shard.tensor.sizes(), generator));
  }
}

// Trains `config`'s layout for three steps, moves the weights off their
// initial scale, saves a checkpoint under dir/ckpt and exports it into
// dir/hf (model.safetensors and config.json), as `strata export` does.
void trainMoveAndExport(const std::string& dir, TrainConfig config) {
  config.checkpoint.dir = dir + "/ckpt";
  const ParallelConfig& p = config.parallel;
  strata::testing::runInProcesses(
      static_cast<int>(p.pp * p.dp * p.cp * p.tp),
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, 3);
        moveOffTheInitialScale(trainer);
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  exportCheckpoint({config.checkpoint.dir, "safetensors", dir + "/hf/model.safetensors"});
}

// The checkpoint's model in one process (`oneProcess`'s layout) and
// transformers' model of the export, `architecture`, give the same logits on
// the same tokens; the export holds exactly the tensors, shapes and dtypes
// transformers itself saves for that model, as safetensors reads them, and
// from_pretrained misses nothing and is surprised by nothing.
void expectTransformersRunsTheExport(const std::string& dir, const TrainConfig& oneProcess,
                                     const std::string& architecture) {
  TensorMap weights = checkpointWeightsOf(dir, oneProcess);
  if (oneProcess.model.tiedEmbeddings)
    weights[models::kTiedHeadName] = weights.at(models::kTiedEmbeddingName);
  torch::nn::Sequential model = oneProcessModel(oneProcess, weights);
  at::Generator generator = at::detail::createCPUGenerator(5);
  torch::Tensor ids = torch::randint(0, oneProcess.model.vocab, {2, oneProcess.model.context},
                                     generator, torch::kLong);
  writeIds(dir + "/ids.json", ids);
  ASSERT_NO_FATAL_FAILURE(
      runReference({"export", dir + "/hf", dir + "/ids.json", dir + "/transformers"}));

  nlohmann::json report = readJson(dir + "/transformers/report.json");
  std::cout << "transformers " << report["versions"]["transformers"].get<std::string>()
            << ", safetensors " << report["versions"]["safetensors"].get<std::string>()
            << std::endl;
  EXPECT_EQ(report["class"], architecture);
  for (const auto& [kind, names] : report["loading"].items())
    EXPECT_TRUE(names.empty()) << "from_pretrained: " << kind << " " << names.dump();
  const nlohmann::json& ours = report["file"]["tensors"];
  const nlohmann::json& theirs = report["transformers"]["tensors"];
  EXPECT_EQ(report["file"]["metadata"], report["transformers"]["metadata"]);
  EXPECT_EQ(ours.size(), theirs.size());
  for (const auto& [name, tensor] : theirs.items()) {
    ASSERT_TRUE(ours.contains(name)) << name << " is not in the export";
    EXPECT_EQ(ours[name], tensor) << name;
    EXPECT_EQ(ours[name]["dtype"], "F32") << name;
  }
  for (const auto& [name, tensor] : ours.items())
    EXPECT_TRUE(theirs.contains(name)) << name << " is in the export, not in transformers' file";

  torch::NoGradGuard noGrad;
  torch::Tensor strata = model->forward(ids).transpose(0, 1);  // [b, s, V]
  expectSameLogits(strata, logitsAt(dir + "/transformers/logits.safetensors"),
                   architecture + " from strata export");
}

// GPT-2 trained in pp 2 x tp 2 with 257 tokens, which tp 2 pads to 258: the
// export drops the padding, splits the fused QKV into c_attn's [q | k | v]
// and writes Conv1D's [in, out] weights.
TEST(TransformersReference, ExportedGpt2RunsInGpt2LMHeadModel) {
  std::string dir = sharedDir("transformers_gpt2_export");
  TrainConfig config = tinyConfig();
  config.model.architecture = kGpt2Architecture;
  config.model.vocab = 257;
  config.parallel.pp = 2;
  config.parallel.tp = 2;
  trainMoveAndExport(dir, config);
  config.parallel = ParallelConfig{};
  expectTransformersRunsTheExport(dir, config, "GPT2LMHeadModel");
  removeSharedDir(dir);
}

// A Llama with grouped-query attention 4:2 trained in tp 2, with Llama 3.1's
// rotary scaling: its original context of 32 rescales three of the four
// frequencies of the 8-wide heads, so transformers must read the scaling
// from the config.json Strata wrote.
TEST(TransformersReference, ExportedLlamaRunsInLlamaForCausalLM) {
  std::string dir = sharedDir("transformers_llama_export");
  TrainConfig config = tinyLlamaConfig(2);
  config.model.vocab = 258;
  config.model.ropeScaling.type = "llama3";
  config.model.ropeScaling.factor = 8;
  config.model.ropeScaling.lowFreqFactor = 1;
  config.model.ropeScaling.highFreqFactor = 4;
  config.model.ropeScaling.originalContext = 32;
  config.parallel.tp = 2;
  trainMoveAndExport(dir, config);
  config.parallel = ParallelConfig{};
  expectTransformersRunsTheExport(dir, config, "LlamaForCausalLM");
  removeSharedDir(dir);
}

// Mixtral's layout (an MoE MLP in every block: 4 experts, top 2) trained
// with its experts split over ep 2.
TEST(TransformersReference, ExportedMixtralRunsInMixtralForCausalLM) {
  std::string dir = sharedDir("transformers_mixtral_export");
  TrainConfig config = tinyMoeConfig();
  config.model.moe.every = 1;
  config.parallel.dp = 2;
  config.parallel.ep = 2;
  trainMoveAndExport(dir, config);
  config.parallel = ParallelConfig{};
  expectTransformersRunsTheExport(dir, config, "MixtralForCausalLM");
  removeSharedDir(dir);
}

// --- import: transformers' own models into Strata -------------------------

// transformers' model of `family` (transformers_reference.py make) read with
// --init-from, as `strata train --init-from FOLDER` reads it with no model
// flags: the model from its config.json, the weights into pp 2 x tp 2 (four
// processes; 301 tokens, padded to 302). Its logits are transformers', and
// Strata's greedy generation from the same folder (temperature 0, the byte
// tokenizer) appends transformers' greedy tokens to the prompt.
void expectImportGivesTransformersModel(const std::string& family) {
  std::string dir = sharedDir("transformers_" + family + "_import");
  std::string made = dir + "/made", folder = made + "/model";
  if (!inRankProcess()) {
    ASSERT_NO_FATAL_FAILURE(runReference({"make", family, made}));
  }
  nlohmann::json report = readJson(made + "/report.json");
  torch::Tensor ids = idsOf(report);  // [b, s]
  TrainConfig config = tinyConfig();  // the run: batches, 16-token windows
  config.parallel.pp = 2;
  config.parallel.tp = 2;
  config.checkpoint.initFrom = folder;
  takeModelFromInitFrom(config, {});
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        ASSERT_EQ(trainer.groups().pp->size(), 2);
        ASSERT_EQ(trainer.groups().tp->size(), 2);
        trainer.initFrom(folder);
        writeLogitsShare(dir, trainer, pipelineLogits(trainer, ids));
      },
      sharedDirOptions(dir));
  torch::Tensor strata = joinedLogits(dir, config.model.vocab);  // [b, s, V]
  torch::Tensor transformers = logitsAt(made + "/logits.safetensors");
  expectSameLogits(strata, transformers,
                   report["class"].get<std::string>() + " made by transformers, in pp 2 x tp 2");

  GenerateOptions greedy;
  greedy.weights = folder;
  expectGreedyContinuation(greedy, report, "transformers");
  removeSharedDir(dir);
}

TEST(TransformersReference, Gpt2LMHeadModelImportsIntoPp2Tp2) {
  expectImportGivesTransformersModel("gpt2");
}

// Its config.json in transformers 5's form: the rotary base and Llama 3.1's
// scaling in rope_parameters.
TEST(TransformersReference, LlamaForCausalLMImportsIntoPp2Tp2) {
  expectImportGivesTransformersModel("llama");
}

TEST(TransformersReference, MixtralForCausalLMImportsIntoPp2Tp2) {
  expectImportGivesTransformersModel("mixtral");
}

}  // namespace
}  // namespace strata::train::testing

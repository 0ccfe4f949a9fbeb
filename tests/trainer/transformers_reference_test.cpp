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
// transformers computed into the test's folder; the comparisons are here.
// Everything is float32: the two sides differ by the order of their sums
// only, far below kTolerance, while a wrong layout, GELU or rotary
// convention moves logits of order one by far more.
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

namespace strata::train::testing {
namespace {

using strata::testing::inRankProcess;

constexpr double kTolerance = 1e-4;

// reference/transformers_reference.py with `args`; its output when it fails.
void runReference(const std::vector<std::string>& args) {
  runPythonScript(STRATA_TRANSFORMERS_REFERENCE, args);
}

nlohmann::json readJson(const std::string& path) {
  nlohmann::json json;
  std::ifstream(path) >> json;
  return json;
}

// Within kTolerance everywhere; the largest difference is printed, for the
// record of how close the two are.
void expectSameLogits(const torch::Tensor& strata, const torch::Tensor& transformers,
                      const std::string& what) {
  ASSERT_EQ(strata.sizes(), transformers.sizes()) << what;
  double largest = (strata - transformers).abs().max().item<double>();
  std::cout << what << ": largest |Strata - transformers| logit difference " << largest
            << " (logits up to " << transformers.abs().max().item<double>() << ")" << std::endl;
  EXPECT_LE(largest, kTolerance) << what;
}

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
  std::vector<std::vector<int64_t>> rows;
  for (int64_t b = 0; b < ids.size(0); ++b) {
    torch::Tensor row = ids[b].contiguous();
    rows.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
  }
  std::ofstream(dir + "/ids.json") << nlohmann::json(rows).dump();
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
  torch::Tensor transformers =
      readSafetensorsIndependently(dir + "/transformers/logits.safetensors")
          .tensors.at("logits")
          .value;
  expectSameLogits(strata, transformers, architecture + " from strata export");
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

// Strata's logits of `ids` [b, s] in the trainer's layout, on the ranks of
// the last pipeline stage: this tp rank's share of the (padded) vocabulary,
// [s, b, Vp / tp]; undefined on the other ranks. The trainer's own model
// takes the head's product inside the loss, so a model of the same spec with
// a logits head is built over the trainer's tp group, cut into the stages
// the trainer's pipeline has, given the trainer's parameters by name (every
// one it runs), and run forward by a pipeline over the trainer's groups,
// whose loss function keeps what the last stage returns.
torch::Tensor pipelineLogits(const Trainer& trainer, const torch::Tensor& ids) {
  const TrainConfig& config = trainer.config();
  const ParallelGroups& groups = trainer.groups();
  models::ModelSpec spec = modelSpecOf(config);
  pipeline::PipelineOptions options;
  options.layersPerStage.assign(config.parallel.stageLayers.begin(),
                                config.parallel.stageLayers.end());
  std::vector<bool> held = pipeline::layersHeldBy(static_cast<int>(spec.layers) + 2,
                                                  groups.pp->size(), groups.coord.pp, options);
  torch::nn::Sequential model =
      models::modelFamily(spec.architecture).build(spec, groups.tp, nullptr, nullptr, held);
  pipeline::Pipeline pipe(model, groups, options);
  std::set<c10::TensorImpl*> runs;
  for (const at::Tensor& t : pipe.parameters()) runs.insert(t.unsafeGetTensorImpl());
  std::map<std::string, at::Tensor> loaded;
  for (const ParameterShard& shard : trainer.parameterShards()) loaded[shard.name] = shard.tensor;
  {
    torch::NoGradGuard noGrad;
    std::set<c10::TensorImpl*> filled;
    for (const auto& item : model->named_parameters()) {
      if (!runs.count(item.value().unsafeGetTensorImpl())) continue;
      // A tied head's weight is the embedding's, which the trainer names.
      std::string name =
          item.key() == models::kTiedHeadName ? models::kTiedEmbeddingName : item.key();
      auto found = loaded.find(name);
      if (found == loaded.end() || !found->second.sizes().equals(item.value().sizes()))
        throw std::runtime_error("the trainer holds no " + name + " of this rank's shape");
      item.value().copy_(found->second);
      filled.insert(item.value().unsafeGetTensorImpl());
    }
    if (filled.size() != runs.size()) throw std::runtime_error("a parameter was not filled");
  }
  model->eval();
  torch::Tensor logits;
  pipe.evaluate(ids, ids, [&](const at::Tensor& output, const at::Tensor&) {
    logits = output.detach().clone();
    return output.new_zeros({});  // the loss is not what is measured here
  });
  return logits;
}

// The last stage's ranks write their tp share of pipelineLogits' logits
// into `dir` (the other stages have none), for joinedLogits.
void writeLogitsShare(const std::string& dir, const Trainer& trainer, const torch::Tensor& logits) {
  if (!logits.defined()) return;
  formats::writeSafetensors(
      dir + "/strata-tp" + std::to_string(trainer.groups().coord.tp) + ".safetensors",
      {{"logits", logits}}, {});
}

// Each tp rank's share of the last stage's logits, joined: [b, s, vocab].
torch::Tensor joinedLogits(const std::string& dir, int64_t vocab) {
  std::vector<torch::Tensor> shares;
  for (int tp = 0; tp < 2; ++tp)
    shares.push_back(
        readSafetensorsIndependently(dir + "/strata-tp" + std::to_string(tp) + ".safetensors")
            .tensors.at("logits")
            .value);
  return torch::cat(shares, 2).narrow(2, 0, vocab).transpose(0, 1);
}

torch::Tensor idsOf(const nlohmann::json& report) {
  std::vector<torch::Tensor> rows;
  for (const auto& row : report["ids"])
    rows.push_back(torch::tensor(row.get<std::vector<int64_t>>(), torch::kLong));
  return torch::stack(rows);  // [b, s]
}

// `greedy` (weights, maybe an adapter) at temperature 0 with the byte
// tokenizer continues report.json's prompt with its "generated" ids, what
// `by` (transformers or PEFT) generated greedily.
void expectGreedyContinuation(GenerateOptions greedy, const nlohmann::json& report,
                              const std::string& by) {
  greedy.tokenizer = "byte";
  greedy.prompt = report["prompt"].get<std::string>();
  std::vector<int64_t> expected = report["generated"].get<std::vector<int64_t>>();
  greedy.tokens = static_cast<int64_t>(expected.size());
  std::string text = generateText(greedy);
  std::vector<int64_t> generated;
  for (size_t i = greedy.prompt.size(); i < text.size(); ++i)
    generated.push_back(static_cast<unsigned char>(text[i]));
  std::cout << "greedy after '" << greedy.prompt << "': Strata " << nlohmann::json(generated)
            << ", " << by << " " << nlohmann::json(expected) << std::endl;
  EXPECT_EQ(text.substr(0, greedy.prompt.size()), greedy.prompt);
  EXPECT_EQ(generated, expected);
}

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
  torch::Tensor transformers =
      readSafetensorsIndependently(made + "/logits.safetensors").tensors.at("logits").value;
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

// --- LoRA: PEFT's adapters (reference/peft_reference.py) -----------------

void runPeftReference(const std::vector<std::string>& args) {
  runPythonScript(STRATA_PEFT_REFERENCE, args);
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
  torch::Tensor peft =
      readSafetensorsIndependently(made + "/logits.safetensors").tensors.at("logits").value;
  expectSameLogits(joinedLogits(dir, config.model.vocab), peft,
                   "a PEFT adapter on LlamaForCausalLM, in pp 2 x tp 2");
  // The adapter matters: the base alone gives other logits.
  torch::Tensor base =
      readSafetensorsIndependently(made + "/base_logits.safetensors").tensors.at("logits").value;
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
  std::vector<std::vector<int64_t>> rows;
  for (int64_t b = 0; b < ids.size(0); ++b) {
    torch::Tensor row = ids[b].contiguous();
    rows.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
  }
  std::ofstream(dir + "/ids.json") << nlohmann::json(rows).dump();
  ASSERT_NO_FATAL_FAILURE(runPeftReference(
      {"run", made + "/model", dir + "/adapter", dir + "/ids.json", dir + "/peft"}));
  nlohmann::json report = readJson(dir + "/peft/report.json");
  EXPECT_EQ(report["adapter_keys"].size(), 2u * 7u * config.model.layers);
  EXPECT_TRUE(report["missing"].empty()) << report["missing"].dump();
  EXPECT_TRUE(report["unexpected"].empty()) << report["unexpected"].dump();

  torch::NoGradGuard noGrad;
  torch::Tensor strata = model->forward(ids).transpose(0, 1);  // [b, s, V]
  auto logitsAt = [](const std::string& path) {
    return readSafetensorsIndependently(path).tensors.at("logits").value;
  };
  expectSameLogits(strata, logitsAt(dir + "/peft/logits.safetensors"),
                   "Strata's adapter (pp 2 x tp 2) in PeftModel");
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
  auto logitsAt = [](const std::string& path) {
    return readSafetensorsIndependently(path).tensors.at("logits").value;
  };
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
  std::ofstream(dir + "/ids.json") << report["ids"].dump();
  ASSERT_NO_FATAL_FAILURE(runPeftReference(
      {"run", made + "/model", dir + "/adapter", dir + "/ids.json", dir + "/peft"}));
  nlohmann::json loaded = readJson(dir + "/peft/report.json");
  // Per block: q, k, v, o and the two fused expert tensors, A and B each.
  EXPECT_EQ(loaded["adapter_keys"].size(), 2u * 6u * config.model.layers);
  EXPECT_TRUE(loaded["missing"].empty()) << loaded["missing"].dump();
  EXPECT_TRUE(loaded["unexpected"].empty()) << loaded["unexpected"].dump();
  torch::NoGradGuard noGrad;
  torch::Tensor strata = model->forward(ids).transpose(0, 1);  // [b, s, V]
  expectSameLogits(strata, logitsAt(dir + "/peft/logits.safetensors"),
                   "Strata's experts' adapters (pp 2 x tp 2) in PeftModel");
  // Training moved them: PEFT's own adapter no longer gives these logits.
  EXPECT_GT((strata - peft).abs().max().item<double>(), 100 * kTolerance);
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

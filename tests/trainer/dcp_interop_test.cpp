// `strata checkpoint convert --from-dcp / --to-dcp` against PyTorch's own
// torch.distributed.checkpoint, FSDP2 and AdamW: reference/dcp_reference.py
// trains and loads a Llama written the way torchtitan writes its Llama 3
// (its names, its rotary pairs), in the project's Python environment.
//
//  - A DCP checkpoint that a 2-rank FSDP2 job saved after 3 steps, converted
//    into pp 2 x tp 2, trains on with the losses the FSDP2 job had.
//  - A Strata checkpoint of pp 2 x tp 2 converted to DCP loads with
//    dcp.load into PyTorch's model and AdamW: the same logits, the same loss,
//    and after one AdamW step the parameters Strata's own next step made.
//  - What the conversion cannot read is refused, naming it.
//
// The same batches reach both sides: Strata's data reader writes them for the
// PyTorch job. Everything is float32; the two sides differ by the order of
// their sums only.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "child_process.h"
#include "project_python.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/config/config_file.h"
#include "strata/train/data_source.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

using strata::testing::inRankProcess;

constexpr double kTolerance = 1e-4;
constexpr int kSavedAt = 3;  // steps before the checkpoint
constexpr int kSteps = 6;    // steps of the FSDP2 job

TrainConfig pipelineAndTensorParallel(const std::string& dir) {
  TrainConfig config = tinyLlamaConfig(2);
  config.parallel.pp = 2;
  config.parallel.tp = 2;
  config.checkpoint.dir = dir + "/ckpt";
  return config;
}

// dir/config.json (the model and AdamW for dcp_reference.py) and
// dir/batches.pt: `steps` global batches of Strata's reader, one replica.
void writeReferenceInputs(const std::string& dir, const TrainConfig& config, int steps) {
  const ModelConfig& m = config.model;
  const OptimConfig& t = config.train;
  nlohmann::json json = {{"layers", m.layers},
                         {"hidden", m.hidden},
                         {"heads", m.heads},
                         {"kv_heads", m.kvHeads},
                         {"ffn", m.ffn},
                         {"vocab", m.vocab},
                         {"rope_theta", m.ropeTheta},
                         {"rms_norm_eps", m.rmsNormEps},
                         {"lr", t.lr},
                         {"min_lr", t.minLr},
                         {"warmup_steps", t.warmupSteps},
                         {"steps", t.steps},
                         {"weight_decay", t.weightDecay},
                         {"beta1", t.beta1},
                         {"beta2", t.beta2},
                         {"eps", t.eps},
                         {"grad_clip", t.gradClip}};
  std::ofstream(dir + "/config.json") << json.dump(2);
  TrainConfig oneReplica = config;
  oneReplica.parallel = ParallelConfig{};
  DataSplit data = makeDataSplit(oneReplica);
  BatchReader reader = makeTrainReader(data, oneReplica, 0);
  std::vector<torch::Tensor> inputs, targets;
  for (int i = 0; i < steps; ++i) {
    Batch batch = reader.next();
    inputs.push_back(batch.input);
    targets.push_back(batch.target);
  }
  c10::Dict<std::string, at::Tensor> batches;
  batches.insert("input", torch::stack(inputs));
  batches.insert("target", torch::stack(targets));
  std::vector<char> bytes = torch::pickle_save(c10::IValue(batches));
  std::ofstream(dir + "/batches.pt", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void runReference(const std::vector<std::string>& args) {
  runPythonScript(STRATA_DCP_REFERENCE, args, 600);
}

struct CommandResult {
  bool success = false;
  std::string output;
};

CommandResult runStrata(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {STRATA_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult result;
  std::optional<ExitStatus> status = strata::testing::runToEnd(
      argv, strata::testing::after(std::chrono::seconds(300)), &result.output);
  result.success = status && status->success();
  return result;
}

void convert(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"checkpoint", "convert", "--python", projectPython()};
  all.insert(all.end(), args.begin(), args.end());
  CommandResult result = runStrata(all);
  ASSERT_TRUE(result.success) << result.output;
}

std::map<std::string, at::Tensor> readTensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue loaded = torch::pickle_load(bytes);
  if (loaded.isTensor()) return {{"", loaded.toTensor()}};
  std::map<std::string, at::Tensor> tensors;
  for (const auto& entry : loaded.toGenericDict())
    tensors[entry.key().toStringRef()] = entry.value().toTensor();
  return tensors;
}

nlohmann::json readJson(const std::string& path) {
  nlohmann::json json;
  std::ifstream(path) >> json;
  return json;
}

// A Strata Llama parameter under torchtitan's name and in its row order,
// written here from torchtitan's model rather than taken from Strata's map:
// q's and k's rows of each head go from halves (i, i + d/2) to adjacent
// pairs (2i, 2i + 1).
std::pair<std::string, torch::Tensor> inTorchtitanTerms(const std::string& name,
                                                        const torch::Tensor& value,
                                                        const ModelConfig& m) {
  static const std::map<std::string, std::string> whole = {
      {"embedding.tokens.weight", "tok_embeddings.weight"},
      {"head.norm.weight", "norm.weight"},
      {"head.lm_head.weight", "output.weight"}};
  if (whole.count(name)) return {whole.at(name), value};
  static const std::map<std::string, std::string> inBlock = {
      {"attention_norm.weight", "attention_norm.weight"},
      {"attention.q.weight", "attention.wq.weight"},
      {"attention.k.weight", "attention.wk.weight"},
      {"attention.v.weight", "attention.wv.weight"},
      {"attention.o.weight", "attention.wo.weight"},
      {"mlp_norm.weight", "ffn_norm.weight"},
      {"mlp.gate.weight", "feed_forward.w1.weight"},
      {"mlp.up.weight", "feed_forward.w3.weight"},
      {"mlp.down.weight", "feed_forward.w2.weight"}};
  std::smatch match;
  EXPECT_TRUE(std::regex_match(name, match, std::regex(R"(block(\d+)\.(.*))"))) << name;
  std::string theirs = "layers." + match[1].str() + "." + inBlock.at(match[2].str());
  bool q = match[2] == "attention.q.weight", k = match[2] == "attention.k.weight";
  if (!q && !k) return {theirs, value};
  int64_t d = m.hidden / m.heads, heads = value.size(0) / d;
  std::vector<int64_t> order;  // torchtitan's row r is Strata's row order[r]
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < d / 2; ++i) {
      order.push_back(h * d + i);
      order.push_back(h * d + d / 2 + i);
    }
  }
  return {theirs, value.index_select(0, torch::tensor(order))};
}

double largestDifference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(DcpInterop, FsdpCheckpointTrainsOnInPipelineAndTensorParallel) {
  std::string dir = sharedDir("dcp_fsdp");
  TrainConfig config = pipelineAndTensorParallel(dir);
  if (!inRankProcess()) {
    writeReferenceInputs(dir, config, kSteps);
    runReference({"fsdp-train", dir + "/config.json", dir + "/batches.pt", std::to_string(kSavedAt),
                  dir + "/torch"});
    ASSERT_FALSE(HasFatalFailure());
    std::ofstream(dir + "/run.toml") << configToToml(config);
    convert({"--from-dcp", dir + "/torch/dcp", "--config", dir + "/run.toml", "--to",
             config.checkpoint.dir});
    ASSERT_FALSE(HasFatalFailure());
  }
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        Trainer trainer(config, World::init());
        std::optional<CheckpointInfo> resumed = trainer.resumeFromLatest();
        ASSERT_TRUE(resumed.has_value());
        ASSERT_EQ(resumed->step, kSavedAt);
        writeValues(dir, "resumed", ctx.rank, trainSteps(trainer, kSteps - kSavedAt));
      },
      sharedDirOptions(dir));
  std::vector<double> fsdp = readJson(dir + "/torch/losses.json").get<std::vector<double>>();
  std::vector<double> resumed = readValues(dir, "resumed", 0);
  ASSERT_EQ(fsdp.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(resumed.size(), static_cast<size_t>(kSteps - kSavedAt));
  for (size_t i = 0; i < resumed.size(); ++i) {
    std::cout << "step " << kSavedAt + i + 1 << ": FSDP2 " << fsdp[kSavedAt + i]
              << ", Strata pp 2 x tp 2 " << resumed[i] << std::endl;
    EXPECT_NEAR(resumed[i], fsdp[kSavedAt + i], kTolerance) << "step " << kSavedAt + i + 1;
  }
  removeSharedDir(dir);
}

TEST(DcpInterop, StrataCheckpointLoadsIntoPyTorch) {
  std::string dir = sharedDir("dcp_export");
  TrainConfig config = pipelineAndTensorParallel(dir);
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, kSavedAt);
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  TrainConfig oneProcess = tinyLlamaConfig(2);
  TensorMap saved;
  if (!inRankProcess()) {
    saved = checkpointWeightsOf(dir, oneProcess);
    writeReferenceInputs(dir, config, kSavedAt + 1);
    convert({"--from", config.checkpoint.dir, "--to-dcp", dir + "/dcp"});
    ASSERT_FALSE(HasFatalFailure());
    runReference({"load-and-step", dir + "/config.json", dir + "/dcp", dir + "/batches.pt",
                  std::to_string(kSavedAt), dir + "/torch"});
    ASSERT_FALSE(HasFatalFailure());
  }
  // Strata's own next step, from the same checkpoint.
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        Trainer trainer(config, World::init());
        ASSERT_TRUE(trainer.resumeFromLatest().has_value());
        writeValues(dir, "next", ctx.rank, trainSteps(trainer, 1));
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  nlohmann::json report = readJson(dir + "/torch/step.json");
  EXPECT_EQ(report["step"].get<int64_t>(), kSavedAt);
  double strataLoss = readValues(dir, "next", 0).at(0);
  std::cout << "step " << kSavedAt + 1 << " loss: Strata " << strataLoss << ", PyTorch from DCP "
            << report["loss"].get<double>() << std::endl;
  EXPECT_NEAR(report["loss"].get<double>(), strataLoss, kTolerance);

  torch::NoGradGuard noGrad;
  at::Tensor input = readTensors(dir + "/batches.pt").at("input")[kSavedAt];
  torch::Tensor strataLogits = oneProcessModel(oneProcess, saved)->forward(input).transpose(0, 1);
  at::Tensor torchLogits = readTensors(dir + "/torch/logits.pt").at("");
  ASSERT_EQ(strataLogits.sizes(), torchLogits.sizes());
  double logits = largestDifference(strataLogits, torchLogits);
  std::cout << "largest |Strata - PyTorch| logit difference " << logits << std::endl;
  EXPECT_LE(logits, kTolerance);

  std::map<std::string, at::Tensor> stepped = readTensors(dir + "/torch/stepped.pt");
  TensorMap next = checkpointWeightsOf(dir, oneProcess);
  ASSERT_EQ(stepped.size(), next.size());
  double parameters = 0;
  for (const auto& [name, value] : next) {
    auto [theirs, ours] = inTorchtitanTerms(name, value, config.model);
    ASSERT_TRUE(stepped.count(theirs)) << theirs;
    parameters = std::max(parameters, largestDifference(ours, stepped.at(theirs)));
    EXPECT_LE(largestDifference(ours, stepped.at(theirs)), kTolerance) << name;
  }
  std::cout << "after one AdamW step: largest parameter difference " << parameters << std::endl;
  removeSharedDir(dir);
}

// A one-process Llama checkpoint of one step under dir/ckpt, and its DCP
// conversion in dir/dcp.
void oneStepCheckpointAndDcp(const std::string& dir) {
  TrainConfig config = tinyLlamaConfig(2);
  config.checkpoint.dir = dir + "/ckpt";
  {
    Trainer trainer(config, singleProcessWorld());
    trainSteps(trainer, 1);
    trainer.saveCheckpoint();
  }
  std::ofstream(dir + "/run.toml") << configToToml(config);
  convert({"--from", config.checkpoint.dir, "--to-dcp", dir + "/dcp"});
}

// torchtitan's own checkpoints keep the model's weights at the top level
// and the optimizer's state flattened ("state.<name>.exp_avg"): read into
// Strata and written out again, every tensor comes back the same.
TEST(DcpInterop, TorchtitansFlattenedFormRoundTrips) {
  std::string dir = sharedDir("dcp_flat");
  oneStepCheckpointAndDcp(dir);
  ASSERT_FALSE(HasFatalFailure());
  runReference({"flatten", dir + "/dcp", dir + "/flat"});
  ASSERT_FALSE(HasFatalFailure());
  convert({"--from-dcp", dir + "/flat", "--config", dir + "/run.toml", "--to", dir + "/back"});
  ASSERT_FALSE(HasFatalFailure());
  convert({"--from", dir + "/back", "--to-dcp", dir + "/again"});
  ASSERT_FALSE(HasFatalFailure());
  runReference({"same", dir + "/dcp", dir + "/again"});
  removeSharedDir(dir);
}

void expectRefused(const std::vector<std::string>& args, const std::string& expected) {
  std::vector<std::string> all = {"checkpoint", "convert"};
  all.insert(all.end(), args.begin(), args.end());
  CommandResult result = runStrata(all);
  EXPECT_FALSE(result.success) << result.output;
  EXPECT_NE(result.output.find(expected), std::string::npos)
      << "expected '" << expected << "' in:\n"
      << result.output;
}

TEST(DcpInterop, RefusesWhatItCannotConvertNamingIt) {
  std::string dir = sharedDir("dcp_refuse");
  oneStepCheckpointAndDcp(dir);
  ASSERT_FALSE(HasFatalFailure());
  std::string python = projectPython();
  namespace fs = std::filesystem;
  fs::copy(dir + "/dcp", dir + "/newer");
  runReference({"add-field", dir + "/newer", "future_field"});
  expectRefused({"--from-dcp", dir + "/newer", "--config", dir + "/run.toml", "--to", dir + "/out",
                 "--python", python},
                "Metadata.future_field");

  TrainConfig wider = tinyLlamaConfig(2);
  wider.model.hidden = 64;
  std::ofstream(dir + "/wider.toml") << configToToml(wider);
  expectRefused({"--from-dcp", dir + "/dcp", "--config", dir + "/wider.toml", "--to", dir + "/out",
                 "--python", python},
                "'tok_embeddings.weight' is [256, 32] where the config's model has [256, 64]");

  TrainConfig gpt = tinyConfig();
  std::ofstream(dir + "/gpt.toml") << configToToml(gpt);
  expectRefused({"--from-dcp", dir + "/dcp", "--config", dir + "/gpt.toml", "--to", dir + "/out",
                 "--python", python},
                "model.architecture = \"strata\"");

  expectRefused({"--from-dcp", dir + "/ckpt", "--config", dir + "/run.toml", "--to", dir + "/out",
                 "--python", python},
                "is not a DCP checkpoint: it has no .metadata");
  expectRefused({"--from", dir + "/ckpt", "--to-dcp", dir + "/dcp", "--python", python},
                "is not an empty folder");
  expectRefused(
      {"--from", dir + "/ckpt", "--to-dcp", dir + "/out2", "--python", dir + "/no-such-python"},
      "cannot run");
  expectRefused({"--from-dcp", dir + "/dcp", "--to", dir + "/out"}, "--from-dcp needs --config");
  expectRefused({"--from", dir + "/ckpt", "--to-dcp", dir + "/out3", "--tp", "2"},
                "--tp with --to-dcp");
  EXPECT_FALSE(fs::exists(dir + "/out/step-000001/COMPLETE"));
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

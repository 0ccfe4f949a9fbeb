// Llama-family models in and out of Hugging Face's format: `strata export`
// of a pp2 x tp2 checkpoint as LlamaForCausalLM, read back by the
// independent safetensors reader and run by a forward that follows
// Hugging Face's modeling_llama (independent_llama.h); `--init-from` of the
// exported file into other layouts; sharded files with an index; and the
// errors of files that do not fit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "independent_gpt2.h"
#include "independent_llama.h"
#include "llama_logits_check.h"
#include "strata/checkpoint/export_hugging_face.h"
#include "strata/formats/safetensors.h"
#include "strata/models/llama.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

namespace fs = std::filesystem;

// A tiny Llama with grouped-query attention 4:2 (by default) and 258
// tokens, so that tp 4 pads the vocabulary.
TrainConfig llamaConfig(int64_t pp, int64_t tp, int64_t kvHeads = 2) {
  TrainConfig c = tinyLlamaConfig(kvHeads);
  c.model.vocab = 258;
  c.parallel.pp = pp;
  c.parallel.tp = tp;
  return c;
}

TensorMap llamaCheckpoint(const std::string& dir) {
  return checkpointWeightsOf(dir, llamaConfig(1, 1));
}

// Hugging Face's names, written out here rather than taken from Strata.
std::map<std::string, std::string> strataNameOf(const ModelConfig& m) {
  std::map<std::string, std::string> names = {
      {"model.embed_tokens.weight", "embedding.tokens.weight"},
      {"model.norm.weight", "head.norm.weight"},
      {"lm_head.weight", "head.lm_head.weight"}};
  const std::vector<std::pair<std::string, std::string>> block = {
      {"input_layernorm", "attention_norm"}, {"self_attn.q_proj", "attention.q"},
      {"self_attn.k_proj", "attention.k"},   {"self_attn.v_proj", "attention.v"},
      {"self_attn.o_proj", "attention.o"},   {"post_attention_layernorm", "mlp_norm"},
      {"mlp.gate_proj", "mlp.gate"},         {"mlp.up_proj", "mlp.up"},
      {"mlp.down_proj", "mlp.down"}};
  for (int64_t i = 0; i < m.layers; ++i)
    for (const auto& [theirs, ours] : block)
      names["model.layers." + std::to_string(i) + "." + theirs + ".weight"] =
          "block" + std::to_string(i) + "." + ours + ".weight";
  return names;
}

TEST(LlamaExport, HoldsTheCheckpointUnderHuggingFaceNamesWithItsConfig) {
  std::string dir = sharedDir("llama_export");
  std::string file = trainAndExportTo(dir, llamaConfig(2, 2));
  RawSafetensors raw = readSafetensorsIndependently(file);
  TensorMap ours = llamaCheckpoint(dir);
  ModelConfig m = llamaConfig(1, 1).model;
  std::map<std::string, std::string> names = strataNameOf(m);
  EXPECT_EQ(raw.tensors.size(), names.size());
  for (const auto& [theirs, strata] : names) {
    auto found = raw.tensors.find(theirs);
    ASSERT_NE(found, raw.tensors.end()) << theirs;
    EXPECT_TRUE(torch::equal(found->second.value, ours.at(strata))) << theirs;
  }
  EXPECT_EQ(raw.tensors.at("model.layers.0.self_attn.k_proj.weight").shape,
            (std::vector<int64_t>{16, 32}));  // 2 kv heads of 8
  nlohmann::json config;
  std::ifstream(dir + "/hf/config.json") >> config;
  EXPECT_EQ(config["architectures"][0], "LlamaForCausalLM");
  EXPECT_EQ(config["model_type"], "llama");
  EXPECT_EQ(config["vocab_size"], 258);
  EXPECT_EQ(config["hidden_size"], m.hidden);
  EXPECT_EQ(config["intermediate_size"], m.ffn);
  EXPECT_EQ(config["num_hidden_layers"], m.layers);
  EXPECT_EQ(config["num_attention_heads"], 4);
  EXPECT_EQ(config["num_key_value_heads"], 2);
  EXPECT_EQ(config["rope_theta"], 500000.0);
  EXPECT_EQ(config["rms_norm_eps"], 1e-5);
  EXPECT_EQ(config["tie_word_embeddings"], false);
  removeSharedDir(dir);
}

// Hugging Face's forward (rotate_half on the two halves of each head) on the
// exported files gives Strata's logits. q and k are scaled up on both sides
// so that the scores are of order one: at the trained weights' scale every
// rotary convention would give nearly the same logits.
TEST(LlamaExport, HuggingFaceForwardGivesStrataLogits) {
  std::string dir = sharedDir("llama_export_logits");
  std::string file = trainAndExportTo(dir, llamaConfig(1, 2, 1));
  TrainConfig config = llamaConfig(1, 1, 1);
  TensorMap weights = checkpointWeightsOf(dir, config);
  RawSafetensors raw = readSafetensorsIndependently(file);
  constexpr double kGain = 25;
  for (int64_t i = 0; i < config.model.layers; ++i) {
    for (const char* w : {"q", "k"}) {
      weights.at("block" + std::to_string(i) + ".attention." + w + ".weight") *= kGain;
      raw.tensors.at("model.layers." + std::to_string(i) + ".self_attn." + w + "_proj.weight")
          .value *= kGain;
    }
  }
  torch::nn::Sequential model = oneProcessModel(config, weights);
  torch::Tensor ids = torch::randint(0, 258, {3, 16}, torch::kLong);
  expectHuggingFaceLogits(model, dir + "/hf", raw.tensors, ids);
  removeSharedDir(dir);
}

// Exported from pp2 x tp2, read into tp 4 (one kv head of two per pair of
// ranks, a padded vocabulary) and into one process: every rank holds its
// slice of the checkpoint's tensors exactly.
TEST(LlamaExport, ImportIntoTp4AndOneProcessHoldsTheCheckpoint) {
  std::string dir = sharedDir("llama_import");
  std::string file = dir + "/hf/model.safetensors";
  trainAndExportTo(dir, llamaConfig(2, 2));
  TrainConfig config = llamaConfig(1, 4);
  config.train.seed = 99;  // other initial weights, all replaced
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        Trainer trainer(config, World::init());
        trainer.initFrom(file);
        writeShards(dir, ctx.rank, trainer);
      },
      sharedDirOptions(dir));
  TensorMap whole = llamaCheckpoint(dir);
  expectShardsSliceWhole(dir, 4, whole, 260);  // 258 rows padded to 260 under tp 4
  Trainer serial(llamaConfig(1, 1), singleProcessWorld());
  serial.initFrom(dir + "/hf");  // the directory finds model.safetensors
  for (const auto& [name, tensor] : byName(serial))
    EXPECT_TRUE(torch::equal(tensor, whole.at(name))) << name;
  removeSharedDir(dir);
}

// With --max-shard-mb the weights go into shards and an index, as
// transformers writes them; --init-from reads the index or its folder.
TEST(LlamaExport, ShardedExportLoadsThroughItsIndex) {
  std::string dir = sharedDir("llama_sharded");
  trainAndExportTo(dir, llamaConfig(1, 1), /*maxShardBytes=*/40000);
  std::vector<std::string> shards;
  for (const auto& entry : fs::directory_iterator(dir + "/hf"))
    if (entry.path().extension() == ".safetensors") shards.push_back(entry.path().filename());
  std::sort(shards.begin(), shards.end());
  ASSERT_GE(shards.size(), 3u);
  EXPECT_EQ(shards.front(), "model-00001-of-0000" + std::to_string(shards.size()) + ".safetensors");
  nlohmann::json index;
  std::ifstream(dir + "/hf/model.safetensors.index.json") >> index;
  EXPECT_EQ(index["weight_map"]["lm_head.weight"], shards.back());
  int64_t bytes = 0;
  for (const std::string& shard : shards) {
    EXPECT_LE(fs::file_size(dir + "/hf/" + shard), 40000u + 4096u) << shard;  // + its header
    for (const auto& [name, t] : readSafetensorsIndependently(dir + "/hf/" + shard).tensors)
      bytes += t.value.numel() * 4;
  }
  EXPECT_EQ(index["metadata"]["total_size"], bytes);
  TensorMap whole = llamaCheckpoint(dir);
  for (const std::string& path : {dir + "/hf/model.safetensors.index.json", dir + "/hf"}) {
    TrainConfig config = llamaConfig(1, 1);
    config.train.seed = 99;
    Trainer fresh(config, singleProcessWorld());
    fresh.initFrom(path);
    for (const auto& [name, tensor] : byName(fresh))
      EXPECT_TRUE(torch::equal(tensor, whole.at(name))) << path << ": " << name;
  }
  removeSharedDir(dir);
}

void expectImportError(const std::string& path, const std::vector<std::string>& parts) {
  Trainer trainer(llamaConfig(1, 1), singleProcessWorld());
  try {
    trainer.initFrom(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const formats::SafetensorsError& error) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << error.what();
  }
}

// bfloat16 weights (as most Llama checkpoints ship) load converted; files
// that do not fit, and broken indexes, are named with the problem.
TEST(LlamaExport, ImportConvertsBfloat16AndNamesWhatDoesNotFit) {
  std::string dir = sharedDir("llama_import_errors");
  std::string file = trainAndExportTo(dir, llamaConfig(1, 1));
  RawSafetensors raw = readSafetensorsIndependently(file);
  std::vector<std::pair<std::string, at::Tensor>> halves, wrongKv;
  for (const auto& [name, t] : raw.tensors) {
    halves.emplace_back(name, t.value.to(torch::kBFloat16));
    bool kv = name.find("k_proj") != std::string::npos;
    wrongKv.emplace_back(name, kv ? torch::cat({t.value, t.value}) : t.value);
  }
  std::string bf16 = dir + "/bf16.safetensors";
  formats::writeSafetensors(bf16, halves, {});
  Trainer fresh(llamaConfig(1, 1), singleProcessWorld());
  fresh.initFrom(bf16);
  TensorMap whole = llamaCheckpoint(dir);
  for (const auto& [name, tensor] : byName(fresh))
    EXPECT_TRUE(torch::equal(tensor, whole.at(name).to(torch::kBFloat16).to(torch::kFloat)))
        << name;

  std::string kv = dir + "/kv.safetensors";
  formats::writeSafetensors(kv, wrongKv, {});
  expectImportError(kv, {kv, "model.layers.0.self_attn.k_proj.weight", "[32, 32]", "[16, 32]"});

  fs::create_directories(dir + "/sharded");
  std::ofstream(dir + "/sharded/model.safetensors.index.json")
      << R"({"weight_map": {"model.norm.weight": "model-00002-of-00002.safetensors"}})";
  expectImportError(dir + "/sharded", {"model.safetensors.index.json",
                                       "model-00002-of-00002.safetensors", "missing"});
  std::ofstream(dir + "/sharded/model.safetensors.index.json") << "{\"weight_map\": 3}";
  expectImportError(dir + "/sharded", {"weight_map"});
  expectImportError(dir + "/nothing", {"nothing"});
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

// `--init-from` takes its model from the config.json beside the weights:
// transformers' Llama (Llama 3.1's rope_scaling included), Mixtral and GPT-2
// configs give Strata's [model] settings; a setting the user gave that
// differs is refused naming both values, and settings Strata's model does
// not compute are refused by name. Then through the command line: a run
// given only --init-from trains the model a run given every model flag
// trains.
#include "strata/config/init_from_model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "strata/config/config_file.h"
#include "strata/error.h"
#include "strata/models/hugging_face.h"
#include "strata/models/model_family.h"
#include "strata_command.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

namespace fs = std::filesystem;

// A folder holding `configJson` as config.json, and the weights' path in it
// (the weights themselves are not read here).
std::string weightsBesideConfig(const std::string& dir, const std::string& configJson) {
  fs::create_directories(dir);
  std::ofstream(dir + "/config.json") << configJson;
  return dir + "/model.safetensors";
}

TrainConfig modelOf(const std::string& configJson, const std::set<std::string>& set = {},
                    TrainConfig config = {}) {
  std::string dir = (fs::temp_directory_path() / ("strata_init_from_" + std::to_string(getpid())));
  config.checkpoint.initFrom = weightsBesideConfig(dir, configJson);
  takeModelFromInitFrom(config, set);
  fs::remove_all(dir);
  return config;
}

void expectRefused(const std::string& configJson, const std::string& words,
                   const std::set<std::string>& set = {}, const TrainConfig& config = {}) {
  try {
    modelOf(configJson, set, config);
    ADD_FAILURE() << "accepted: " << configJson;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

// Llama 3.1 8B's config.json, its sizes made small.
const char* const kLlama31 = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
  "intermediate_size": 112, "vocab_size": 300, "max_position_embeddings": 131072,
  "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "tie_word_embeddings": false,
  "hidden_act": "silu", "attention_bias": false, "mlp_bias": false, "head_dim": 16,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "torch_dtype": "bfloat16"})";

TEST(InitFromModel, Llama31ConfigGivesTheWholeModel) {
  ModelConfig m = modelOf(kLlama31).model;
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.layers, 2);
  EXPECT_EQ(m.hidden, 64);
  EXPECT_EQ(m.heads, 4);
  EXPECT_EQ(m.kvHeads, 2);
  EXPECT_EQ(m.ffn, 112);
  EXPECT_EQ(m.vocab, 300);
  EXPECT_EQ(m.context, 131072);
  EXPECT_DOUBLE_EQ(m.ropeTheta, 500000.0);
  EXPECT_DOUBLE_EQ(m.rmsNormEps, 1e-5);
  EXPECT_FALSE(m.tiedEmbeddings);
  EXPECT_EQ(m.ropeScaling.type, "llama3");
  EXPECT_DOUBLE_EQ(m.ropeScaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(m.ropeScaling.lowFreqFactor, 1.0);
  EXPECT_DOUBLE_EQ(m.ropeScaling.highFreqFactor, 4.0);
  EXPECT_EQ(m.ropeScaling.originalContext, 8192);
  EXPECT_FALSE(m.moe.enabled());
}

// Fields LlamaConfig defaults when the file leaves them out: kv heads as
// many as heads, base 10000, epsilon 1e-6, untied, no scaling.
TEST(InitFromModel, LlamaFieldsLeftOutTakeTransformersDefaults) {
  ModelConfig m = modelOf(R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 1,
      "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 256,
      "max_position_embeddings": 2048, "rope_scaling": null})")
                      .model;
  EXPECT_EQ(m.kvHeads, 4);
  EXPECT_DOUBLE_EQ(m.ropeTheta, 10000.0);
  EXPECT_DOUBLE_EQ(m.rmsNormEps, 1e-6);
  EXPECT_FALSE(m.tiedEmbeddings);
  EXPECT_FALSE(m.ropeScaling.enabled());
}

// transformers 5 writes the rotary base and its scaling together as
// rope_parameters, with no rope_theta or rope_scaling beside them (the
// TransformersReference.* tests load such files as transformers saves them).
TEST(InitFromModel, Transformers5RopeParametersGiveTheBaseAndTheScaling) {
  const std::string llama = R"({"model_type": "llama", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 112,
      "vocab_size": 300, "max_position_embeddings": 131072,
      "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                          "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 8192}})";
  ModelConfig m = modelOf(llama).model;
  EXPECT_DOUBLE_EQ(m.ropeTheta, 500000.0);
  EXPECT_EQ(m.ropeScaling.type, "llama3");
  EXPECT_DOUBLE_EQ(m.ropeScaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(m.ropeScaling.lowFreqFactor, 1.0);
  EXPECT_DOUBLE_EQ(m.ropeScaling.highFreqFactor, 4.0);
  EXPECT_EQ(m.ropeScaling.originalContext, 8192);
  ModelConfig mixtral = modelOf(R"({"model_type": "mixtral", "hidden_size": 32,
      "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 48,
      "vocab_size": 256, "max_position_embeddings": 4096, "num_local_experts": 4,
      "num_experts_per_tok": 2, "rope_parameters": {"rope_type": "default",
                                                    "rope_theta": 250000.0}})")
                            .model;
  EXPECT_DOUBLE_EQ(mixtral.ropeTheta, 250000.0);
  EXPECT_FALSE(mixtral.ropeScaling.enabled());
  expectRefused(std::regex_replace(llama, std::regex("\"llama3\""), "\"yarn\""),
                "rope_parameters of type \"yarn\"");
}

TEST(InitFromModel, MixtralConfigGivesTheExperts) {
  ModelConfig m = modelOf(R"({"model_type": "mixtral", "hidden_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 1, "intermediate_size": 48,
      "vocab_size": 256, "max_position_embeddings": 4096, "num_local_experts": 8,
      "num_experts_per_tok": 2, "router_aux_loss_coef": 0.02, "sliding_window": null})")
                      .model;
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.topK, 2);
  EXPECT_EQ(m.moe.expertFfn, 48);
  EXPECT_EQ(m.moe.every, 1);
  EXPECT_EQ(m.moe.sharedExperts, 0);
  EXPECT_TRUE(m.moe.normalizeTopK);
  EXPECT_DOUBLE_EQ(m.moe.auxLossCoeff, 0.02);
  EXPECT_DOUBLE_EQ(m.ropeTheta, 1e6);  // MixtralConfig's default
}

// GPT-2 small's config.json: n_inner null means 4 x n_embd.
TEST(InitFromModel, Gpt2ConfigGivesTheModel) {
  ModelConfig m = modelOf(R"({"model_type": "gpt2", "activation_function": "gelu_new",
      "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_inner": null, "n_layer": 12,
      "n_positions": 1024, "layer_norm_epsilon": 1e-05, "vocab_size": 50257})")
                      .model;
  EXPECT_EQ(m.architecture, "gpt2");
  EXPECT_EQ(m.layers, 12);
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.heads, 12);
  EXPECT_EQ(m.ffn, 3072);
  EXPECT_EQ(m.vocab, 50257);
  EXPECT_EQ(m.context, 1024);
  EXPECT_TRUE(m.tiedEmbeddings);
}

TEST(InitFromModel, ASettingGivenThatDiffersIsRefusedNamingBoth) {
  TrainConfig mine;
  mine.model.hidden = 32;
  expectRefused(kLlama31, "model.hidden is 32 here but 64 in '", {"model.hidden"}, mine);
  mine.model.ropeScaling.factor = 4;
  expectRefused(kLlama31, "model.rope_scaling.factor is 4.0 here but 8.0 in '",
                {"model.rope_scaling.factor"}, mine);
  // Given and equal, or not given at all: the file's.
  mine.model.hidden = 64;
  EXPECT_EQ(modelOf(kLlama31, {"model.hidden"}, mine).model.hidden, 64);
  mine.model.hidden = 32;
  EXPECT_EQ(modelOf(kLlama31, {}, mine).model.hidden, 64);
  // Settings the file does not describe stay the user's.
  mine.model.dropout = 0.25;
  EXPECT_DOUBLE_EQ(modelOf(kLlama31, {"model.dropout"}, mine).model.dropout, 0.25);
}

TEST(InitFromModel, WhatStrataDoesNotComputeIsRefusedByName) {
  std::string llama = kLlama31;
  auto with = [&](const std::string& from, const std::string& to) {
    return std::regex_replace(llama, std::regex(from), to);
  };
  expectRefused(with("\"llama3\"", "\"yarn\""), "rope_scaling of type \"yarn\"");
  expectRefused(with("\"attention_bias\": false", "\"attention_bias\": true"), "attention biases");
  expectRefused(with("\"silu\"", "\"gelu\""), "hidden_act \"gelu\"");
  expectRefused(with("\"head_dim\": 16", "\"head_dim\": 8"), "head_dim 8");
  expectRefused(with("\"model_type\": \"llama\"", "\"model_type\": \"mistral\""),
                "model_type 'mistral': Strata reads gpt2, llama and mixtral");
  expectRefused(with("\"hidden_size\": 64,", ""),
                "hidden_size must be an integer >= 1, got nothing");
  expectRefused(with("\"original_max_position_embeddings\": 8192",
                     "\"original_max_position_embeddings\": -1"),
                "rope_scaling.original_max_position_embeddings must be an integer >= 1");
  expectRefused("{\"model_type\": ", "is not a JSON object");
}

TEST(InitFromModel, WithoutAConfigJsonTheModelIsTheConfigurations) {
  TrainConfig config;
  config.model.hidden = 48;
  config.checkpoint.initFrom = "/nonexistent/strata-weights/model.safetensors";
  takeModelFromInitFrom(config, {});
  EXPECT_EQ(config.model.hidden, 48);
  EXPECT_EQ(config.model.architecture, "strata");
}

// What export writes, read back: the same model, rope scaling and experts.
TEST(InitFromModel, ExportsConfigJsonReadsBackAsTheSameModel) {
  TrainConfig trained = tinyMoeConfig();
  trained.model.moe.every = 1;
  trained.model.ropeScaling.type = "llama3";
  trained.model.ropeScaling.factor = 16;
  trained.model.ropeScaling.originalContext = 4096;
  models::ModelSpec spec = modelSpecOf(trained);
  std::string json = models::modelFamily("llama").huggingFace(spec)->configJson();
  TrainConfig read = modelOf(json);
  // Mixtral's file holds no dense width; every other setting round-trips.
  read.model.ffn = trained.model.ffn;
  // Neither do the losses' weights other than the balance loss's.
  read.model.moe.zLossCoeff = trained.model.moe.zLossCoeff;
  TrainConfig expected;
  expected.model = trained.model;
  read.checkpoint = expected.checkpoint;
  EXPECT_EQ(configToToml(read), configToToml(expected));
}

// The command line: --init-from alone trains the model the flags describe.
TEST(InitFromModel, CommandLineTakesTheModelFromTheWeightsConfig) {
  std::string dir = sharedDir("init_from_cli");
  TrainConfig config = tinyLlamaConfig(2);
  config.model.ropeScaling.type = "llama3";
  config.model.ropeScaling.originalContext = 64;
  std::string weights = trainAndExportTo(dir, config);
  std::string run = " --steps 1 --warmup-steps 1 --global-batch 4 --micro-batch 2 --seq-len 16 ";
  std::string model =
      " --architecture llama --layers 4 --hidden 32 --heads 4 --kv-heads 2 --ffn 64 "
      "--context 16 --rope-theta 500000 --rope-scaling llama3 --rope-original-context 64 ";
  auto [status, given] =
      strata("train --init-from " + weights + run + model + "--out-dir " + dir + "/given");
  ASSERT_EQ(status, 0) << given;
  auto [taken, output] =
      strata("train --init-from " + dir + "/hf" + run + "--out-dir " + dir + "/taken");
  ASSERT_EQ(taken, 0) << output;
  std::smatch first;
  ASSERT_TRUE(std::regex_search(given, first, std::regex("\"loss_start\":[0-9.e-]+"))) << given;
  EXPECT_NE(output.find(first.str()), std::string::npos) << output;
  auto [refused, message] = strata("train --init-from " + dir + "/hf --hidden 64" + run +
                                   "--out-dir " + dir + "/refused");
  EXPECT_EQ(refused, 2) << message;
  EXPECT_NE(message.find("model.hidden is 64 here but 32 in"), std::string::npos) << message;
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing

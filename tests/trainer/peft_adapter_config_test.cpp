// PEFT adapter configs Strata cannot read as written are refused naming the
// file and the field, and a Mixtral's experts' adapters sit in PEFT's
// fused tensors as peft_adapter.h says (PeftReference.* runs them in PEFT).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "strata/checkpoint/peft_adapter.h"
#include "strata/config/model_spec.h"
#include "strata/error.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json mixtralAdapterConfig() {
  return {{"peft_type", "LORA"},
          {"r", 4},
          {"lora_alpha", 8},
          {"target_modules", {"q_proj", "v_proj"}},
          {"target_parameters", {"experts.gate_up_proj", "experts.down_proj"}}};
}

// readAdapterConfig of `config` written into a fresh folder.
PeftAdapterConfig readWritten(const json& config,
                              const tensor_parallel::LoraConfig& expected = {}) {
  const fs::path dir = fs::temp_directory_path() / "strata-peft-config";
  fs::create_directories(dir);
  std::ofstream(dir / kPeftConfigFile) << config.dump();
  return readAdapterConfig(dir.string(), expected);
}

void expectRefused(const json& config, const std::string& part,
                   const tensor_parallel::LoraConfig& expected = {}) {
  try {
    readWritten(config, expected);
    ADD_FAILURE() << "accepted " << config.dump();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("strata-peft-config"), std::string::npos) << e.what();
  }
}

TEST(PeftAdapterConfig, ExpertsTargetParametersAndTheirRank) {
  PeftAdapterConfig read = readWritten(mixtralAdapterConfig());
  EXPECT_EQ(read.lora.targets, (std::set<std::string>{"q", "v", "gate", "up", "down"}));
  EXPECT_EQ(read.gateUpRank, 4);
  json sideBySide = mixtralAdapterConfig();
  sideBySide["rank_pattern"] = {{"gate_up_proj", 8}};
  sideBySide["alpha_pattern"] = {{"gate_up_proj", 16}};
  EXPECT_EQ(readWritten(sideBySide).gateUpRank, 8);
}

TEST(PeftAdapterConfig, WhatStrataDoesNotComputeIsRefusedByName) {
  json c = mixtralAdapterConfig();
  c["target_parameters"] = {"experts.gate_up_proj", "mlp.router.weight"};
  expectRefused(c, "target parameter \"mlp.router.weight\" is not one Strata adapts");
  c = mixtralAdapterConfig();
  c["rank_pattern"] = {{"q_proj", 8}};
  expectRefused(c, "rank_pattern {\"q_proj\":8} gives some modules their own rank");
  c = mixtralAdapterConfig();
  c["rank_pattern"] = {{"gate_up_proj", 8}};  // the scale alpha / r would halve
  expectRefused(c, "gate_up_proj's rank_pattern and alpha_pattern must be twice r and lora_alpha");
  c = mixtralAdapterConfig();
  c["use_dora"] = true;
  expectRefused(c, "use_dora is true");
  c = mixtralAdapterConfig();
  c["target_modules"] = "q_proj|v_proj";
  expectRefused(c, "target_modules must be a list");
  tensor_parallel::LoraConfig run;
  run.adapter.rank = 4;
  run.adapter.alpha = 8;
  run.targets = {"q", "v"};
  expectRefused(mixtralAdapterConfig(),
                "target modules down, gate, q, up, v (finetune.targets q, v)", run);
}

// The tiny Mixtral with adapters on its experts' gate, up and down.
models::ModelSpec mixtralSpec(std::set<std::string> targets) {
  TrainConfig c = tinyMoeConfig();
  c.model.moe.every = 1;
  c.finetune.method = "lora";
  c.finetune.rank = 2;
  c.finetune.alpha = 4;
  c.finetune.targets = {targets.begin(), targets.end()};
  return modelSpecOf(c);
}

TEST(PeftAdapterConfig, ExpertAdaptersInPeftsFusedTensors) {
  models::ModelSpec spec = mixtralSpec({"gate", "up", "down"});
  const int64_t r = 2, E = spec.moe.experts, F = spec.moe.expertFfn;
  std::map<std::string, at::Tensor> ours;
  auto parameter = [&](const std::string& name) {
    auto found = ours.find(name);
    if (found == ours.end()) {
      // Rows of A and B that name their expert, target and element.
      at::Tensor t = name.find("lora_a") != std::string::npos   ? torch::randn({r, spec.hidden})
                     : name.find(".down.") != std::string::npos ? torch::randn({spec.hidden, r})
                                                                : torch::randn({F, r});
      found = ours.emplace(name, t).first;
    }
    return found->second;
  };
  std::map<std::string, at::Tensor> fused;
  for (auto& [name, t] : peftAdapterTensors(spec, parameter)) fused[name] = t;
  const std::string block0 = "base_model.model.model.layers.0.mlp.experts";
  at::Tensor gateUpA = fused.at(block0 + ".base_layer.lora_A.weight");  // [2r E, H]
  at::Tensor gateUpB = fused.at(block0 + ".base_layer.lora_B.weight");  // [2F, 2r E]
  at::Tensor downB = fused.at(block0 + ".lora_B.weight");               // [H, r E]
  ASSERT_EQ(gateUpA.sizes(), (std::vector<int64_t>{2 * r * E, spec.hidden}));
  ASSERT_EQ(gateUpB.sizes(), (std::vector<int64_t>{2 * F, 2 * r * E}));
  // PEFT's delta of expert e (ParamWrapper: A rows e r' + k, B columns k E + e)
  // is gate's B A over up's.
  for (int64_t e = 0; e < E; ++e) {
    at::Tensor a = gateUpA.narrow(0, e * 2 * r, 2 * r);                    // [2r, H]
    at::Tensor b = gateUpB.index_select(1, torch::arange(2 * r) * E + e);  // [2F, 2r]
    std::string ex = "block0.mlp.experts." + std::to_string(e) + ".";
    at::Tensor gate = ours.at(ex + "gate.lora_b").matmul(ours.at(ex + "gate.lora_a"));
    at::Tensor up = ours.at(ex + "up.lora_b").matmul(ours.at(ex + "up.lora_a"));
    EXPECT_TRUE(torch::allclose(b.matmul(a), torch::cat({gate, up}), 1e-5, 1e-6)) << e;
    at::Tensor down = downB.index_select(1, torch::arange(r) * E + e);
    EXPECT_TRUE(torch::equal(down, ours.at(ex + "down.lora_b"))) << e;
  }
  // Read back at rank 2r, each adapter comes out whole.
  std::unique_ptr<models::HuggingFaceLayout> layout = peftAdapterLayout(spec, 2 * r);
  at::Tensor upB = layout->blockOf("block0.mlp.experts.3.up.lora_b", gateUpB, {0, 0}, {F, r});
  EXPECT_TRUE(torch::equal(upB, ours.at("block0.mlp.experts.3.up.lora_b")));
  // A rank-2r gate_up_proj whose gate rows reach into up's ranks is not two adapters.
  gateUpB[0][r * E + 1] = 1.0f;
  try {
    layout->blockOf("block0.mlp.experts.1.gate.lora_b", gateUpB, {0, 0}, {F, r});
    ADD_FAILURE() << "a mixed rank-2r gate_up_proj was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mixes gate's and up's ranks"), std::string::npos)
        << e.what();
  }
}

TEST(PeftAdapterConfig, ExpertsGateWithoutUpIsRefusedByName) {
  try {
    peftAdapterLayout(mixtralSpec({"q", "gate"}));
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("target both gate and up, or neither"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::train::testing

#include "strata/checkpoint/peft_adapter.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/error.h"

namespace strata::train {
namespace {

using nlohmann::json;

// PEFT's module names of Strata's targets.
const std::map<std::string, std::string>& peftModuleOf() {
  static const std::map<std::string, std::string> kModules = {
      {"q", "q_proj"},       {"k", "k_proj"},   {"v", "v_proj"},      {"o", "o_proj"},
      {"gate", "gate_proj"}, {"up", "up_proj"}, {"down", "down_proj"}};
  return kModules;
}

std::string adaptedModule(int64_t block, const std::string& target) {
  bool attention = target == "q" || target == "k" || target == "v" || target == "o";
  return "block" + std::to_string(block) + (attention ? ".attention." : ".mlp.") + target;
}

std::string withoutWeight(const std::string& name) {
  const std::string suffix = ".weight";
  return name.substr(0, name.size() - suffix.size());
}

// The adapters of `spec`'s model over its base's Hugging Face layout.
class PeftAdapterLayout : public models::HuggingFaceLayout {
 public:
  PeftAdapterLayout(const models::ModelSpec& spec, std::unique_ptr<models::HuggingFaceLayout> base)
      : spec_(spec), base_(std::move(base)) {
    for (const std::string& target : spec.lora.targets)
      if (spec.moe.enabled() && (target == "gate" || target == "up" || target == "down"))
        throw ConfigError(
            "PEFT's format has no place here for adapters on a mixture of experts' MLPs (target '" +
            target +
            "'): transformers fuses a Mixtral's experts into one tensor, which PEFT adapts "
            "through target_parameters, and that format is not written; export with "
            "--merge-adapter instead, or adapt q, k, v, o");
    std::map<std::string, const models::HuggingFaceTensor*> byStrata;
    std::vector<models::HuggingFaceTensor> baseTensors = base_->tensors();
    for (const models::HuggingFaceTensor& t : baseTensors) byStrata[t.strata] = &t;
    const int64_t r = spec.lora.adapter.rank;
    for (int64_t block = 0; block < spec.layers; ++block) {
      for (const std::string& target : spec.lora.targets) {
        std::string module = adaptedModule(block, target);
        auto weight = byStrata.find(module + ".weight");
        if (weight == byStrata.end()) continue;  // an MoE block's MLP: no adapter
        const models::HuggingFaceTensor& w = *weight->second;
        std::string peft = "base_model.model." + withoutWeight(w.huggingFace);
        tensors_.push_back({module + ".lora_a", peft + ".lora_A.weight", {r, w.shape[1]}});
        tensors_.push_back({module + ".lora_b", peft + ".lora_B.weight", {w.shape[0], r}});
      }
    }
  }

  std::string architecture() const override {
    return "PEFT LoRA adapter of " + base_->architecture();
  }
  std::vector<models::HuggingFaceTensor> tensors() const override { return tensors_; }
  bool ignorable(const std::string&) const override { return false; }
  at::Tensor toHuggingFace(const std::string&, const at::Tensor& whole) const override {
    return whole.contiguous();
  }
  at::Tensor blockOf(const std::string&, const at::Tensor& t, const std::vector<int64_t>& offset,
                     const std::vector<int64_t>& length) const override {
    return models::narrowedBlock(t, offset, length);
  }

  // adapter_config.json: what PEFT's LoraConfig reads.
  std::string configJson() const override {
    json targets = json::array();
    for (const std::string& t : spec_.lora.targets) targets.push_back(peftModuleOf().at(t));
    json config = {{"peft_type", "LORA"},
                   {"task_type", "CAUSAL_LM"},
                   {"r", spec_.lora.adapter.rank},
                   {"lora_alpha", spec_.lora.adapter.alpha},
                   {"lora_dropout", spec_.lora.adapter.dropout},
                   {"target_modules", targets},
                   {"bias", "none"},
                   {"fan_in_fan_out", false},
                   {"inference_mode", true},
                   {"init_lora_weights", true},
                   {"use_rslora", false},
                   {"use_dora", false},
                   {"modules_to_save", nullptr},
                   {"base_model_name_or_path", nullptr}};
    return config.dump(2) + "\n";
  }

 private:
  models::ModelSpec spec_;
  std::unique_ptr<models::HuggingFaceLayout> base_;
  std::vector<models::HuggingFaceTensor> tensors_;
};

json readJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("PEFT adapter config '" + path + "' cannot be opened");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw ConfigError("PEFT adapter config '" + path + "' is not JSON: " + e.what());
  }
}

// target_modules as Strata's targets.
std::set<std::string> strataTargets(const json& modules, const std::string& path) {
  std::map<std::string, std::string> strataOf;
  for (const auto& [strata, peft] : peftModuleOf()) strataOf[peft] = strata;
  if (!modules.is_array())
    throw ConfigError("PEFT adapter config '" + path +
                      "': target_modules must be a list of module names (a regular expression "
                      "is not read)");
  std::set<std::string> targets;
  for (const json& m : modules) {
    auto found = m.is_string() ? strataOf.find(m.get<std::string>()) : strataOf.end();
    if (found == strataOf.end())
      throw ConfigError("PEFT adapter config '" + path + "': target module " + m.dump() +
                        " is not one Strata adapts (q_proj, k_proj, v_proj, o_proj, gate_proj, "
                        "up_proj, down_proj)");
    targets.insert(found->second);
  }
  return targets;
}

std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

}  // namespace

std::unique_ptr<models::HuggingFaceLayout> peftAdapterLayout(const models::ModelSpec& spec) {
  if (!spec.lora.enabled())
    throw ConfigError("the model has no LoRA adapters (finetune.method is not lora)");
  return std::make_unique<PeftAdapterLayout>(
      spec, models::modelFamily(spec.architecture).huggingFace(spec));
}

tensor_parallel::LoraConfig readAdapterConfig(const std::string& dir,
                                              const tensor_parallel::LoraConfig& expected) {
  const std::string path = (std::filesystem::path(dir) / kPeftConfigFile).string();
  json config = readJson(path);
  auto field = [&](const char* name) -> const json& {
    if (!config.is_object() || !config.contains(name))
      throw ConfigError("PEFT adapter config '" + path + "' has no '" + name + "'");
    return config.at(name);
  };
  if (field("peft_type") != "LORA")
    throw ConfigError("PEFT adapter config '" + path + "': peft_type " + field("peft_type").dump() +
                      " is not LORA");
  // What would make PEFT's adapter compute other than Strata's.
  for (const char* unsupported : {"use_dora", "use_rslora", "fan_in_fan_out", "lora_bias"})
    if (config.value(unsupported, false) == true)
      throw ConfigError("PEFT adapter config '" + path + "': " + unsupported +
                        " is true, which Strata's LoRA does not compute");
  for (const char* pattern : {"rank_pattern", "alpha_pattern"})
    if (config.contains(pattern) && !config.at(pattern).empty())
      throw ConfigError("PEFT adapter config '" + path + "': " + pattern +
                        " gives some modules their own rank or alpha, which Strata's LoRA does "
                        "not (one rank and alpha for every adapter)");
  if (config.contains("layers_to_transform") && !config.at("layers_to_transform").is_null())
    throw ConfigError("PEFT adapter config '" + path +
                      "': layers_to_transform adapts some layers only; Strata adapts every block");
  if (config.value("bias", std::string("none")) != "none")
    throw ConfigError("PEFT adapter config '" + path + "': bias " + config.at("bias").dump() +
                      " trains biases, which Strata's LoRA does not");
  if (!field("r").is_number_integer() || !field("lora_alpha").is_number())
    throw ConfigError("PEFT adapter config '" + path +
                      "': r must be an integer and lora_alpha a "
                      "number");
  tensor_parallel::LoraConfig lora;
  lora.adapter.rank = field("r").get<int64_t>();
  lora.adapter.alpha = field("lora_alpha").get<double>();
  lora.targets = strataTargets(field("target_modules"), path);
  if (!expected.enabled()) return lora;
  std::ostringstream mismatch;
  if (lora.adapter.rank != expected.adapter.rank)
    mismatch << " r " << lora.adapter.rank << " (the run's finetune.rank " << expected.adapter.rank
             << ")";
  if (lora.adapter.alpha != expected.adapter.alpha)
    mismatch << " lora_alpha " << lora.adapter.alpha << " (finetune.alpha "
             << expected.adapter.alpha << ")";
  if (lora.targets != expected.targets)
    mismatch << " target modules " << joined(lora.targets) << " (finetune.targets "
             << joined(expected.targets) << ")";
  if (!mismatch.str().empty())
    throw ConfigError("PEFT adapter '" + dir + "' does not match the run:" + mismatch.str());
  return lora;
}

}  // namespace strata::train

#include "strata/checkpoint/peft_adapter.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
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

// Where one expert's adapter lies in PEFT's pair of tensors for a fused
// expert weight of transformers' (experts.gate_up_proj [E, 2F, H] or
// experts.down_proj [E, H, F]), which ParamWrapper adapts as
//   lora_A.weight [r' E, in]:  row e r' + k is row k of expert e's A
//   lora_B.weight [out, r' E]: column k E + e is column k of expert e's B
// (delta_e = B_e A_e, scaled by alpha' / r'). Gate and up share the fused
// tensor: B's rows [0, F) are gate's, [F, 2F) up's. Strata's gate and up
// have an A each, so they are written as one adapter of rank r' = 2r, gate
// in ranks [0, r) and up in [r, 2r), B's other blocks zero; an adapter PEFT
// made at rank r' = r shares its A, which both read.
struct ExpertSlot {
  int64_t expert = 0;
  int64_t experts = 0;
  int64_t fusedRank = 0;  // r'
  int64_t rankBegin = 0;  // the ranks [rankBegin, rankBegin + r) of r' that are this adapter's
  int64_t rowBegin = 0;   // B's rows [rowBegin, rowBegin + rows) are this adapter's
  int64_t rows = 0;       // its B's: F for gate and up, H for down
  bool isB = false;
};

// PEFT's name for expert target `target` of a Mixtral block: gate and up
// adapt gate_up_proj, down down_proj. ParamWrappers on one module nest, the
// one PEFT made first (gate_up_proj, the module's first parameter) inside:
// its tensors are under experts.base_layer when down_proj is adapted too.
std::string fusedExpertParameter(const std::string& target) {
  return target == "down" ? "down_proj" : "gate_up_proj";
}

bool adaptsExperts(const models::ModelSpec& spec) {
  if (!spec.moe.enabled()) return false;
  for (const char* t : {"gate", "up", "down"})
    if (spec.lora.targets.count(t)) return true;
  return false;
}

// The adapters of `spec`'s model over its base's Hugging Face layout.
class PeftAdapterLayout : public models::HuggingFaceLayout {
 public:
  PeftAdapterLayout(const models::ModelSpec& spec, std::unique_ptr<models::HuggingFaceLayout> base,
                    int64_t gateUpRank)
      : spec_(spec), base_(std::move(base)), gateUpRank_(gateUpRank) {
    if (adaptsExperts(spec) && spec.lora.targets.count("gate") != spec.lora.targets.count("up"))
      throw ConfigError(
          "PEFT's format adapts a Mixtral's experts' gate and up as one tensor "
          "(experts.gate_up_proj): target both gate and up, or neither, to write or read the "
          "experts' adapters in it; --merge-adapter writes any");
    std::map<std::string, const models::HuggingFaceTensor*> byStrata;
    std::vector<models::HuggingFaceTensor> baseTensors = base_->tensors();
    for (const models::HuggingFaceTensor& t : baseTensors) byStrata[t.strata] = &t;
    const int64_t r = spec.lora.adapter.rank;
    for (int64_t block = 0; block < spec.layers; ++block) {
      for (const std::string& target : spec.lora.targets) {
        std::string module = adaptedModule(block, target);
        auto weight = byStrata.find(module + ".weight");
        if (weight == byStrata.end()) continue;  // an MoE block's MLP: its experts', below
        const models::HuggingFaceTensor& w = *weight->second;
        std::string peft = "base_model.model." + withoutWeight(w.huggingFace);
        tensors_.push_back({module + ".lora_a", peft + ".lora_A.weight", {r, w.shape[1]}});
        tensors_.push_back({module + ".lora_b", peft + ".lora_B.weight", {w.shape[0], r}});
      }
      if (adaptsExperts(spec)) addExperts(block);
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
  // An expert's adapter: its rows (A) or rows and columns (B) of the fused
  // tensor `t` (checked once per tensor), then the block.
  at::Tensor blockOf(const std::string& strataName, const at::Tensor& t,
                     const std::vector<int64_t>& offset,
                     const std::vector<int64_t>& length) const override {
    auto slot = expertSlots_.find(strataName);
    if (slot == expertSlots_.end()) return models::narrowedBlock(t, offset, length);
    checkFusedBlocks(strataName, slot->second, t);
    return models::narrowedBlock(expertPart(slot->second, t), offset, length);
  }

  // The Hugging Face tensor `first` names, assembled from every Strata
  // parameter it holds (an expert's adapter is part of a fused one).
  at::Tensor assemble(const models::HuggingFaceTensor& first,
                      const std::function<at::Tensor(const std::string&)>& parameter) const {
    if (!expertSlots_.count(first.strata)) return parameter(first.strata).contiguous();
    at::Tensor fused = at::zeros(first.shape, at::kFloat);
    for (const models::HuggingFaceTensor& t : tensors_)
      if (t.huggingFace == first.huggingFace)
        expertPart(expertSlots_.at(t.strata), fused).copy_(parameter(t.strata));
    return fused;
  }

  // adapter_config.json: what PEFT's LoraConfig reads.
  std::string configJson() const override {
    json targets = json::array();
    std::set<std::string> parameters;
    for (const std::string& t : spec_.lora.targets) {
      bool experts = adaptsExperts(spec_) && (t == "gate" || t == "up" || t == "down");
      if (experts)
        parameters.insert("experts." + fusedExpertParameter(t));
      else
        targets.push_back(peftModuleOf().at(t));
    }
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
    if (!parameters.empty()) {
      // gate_up_proj first, as PEFT writes them.
      config["target_parameters"] =
          json(std::vector<std::string>(parameters.rbegin(), parameters.rend()));
      if (gateUpRank_ != spec_.lora.adapter.rank) {
        // Gate's and up's adapters side by side: rank 2r, alpha 2 alpha, the same scale.
        const double ratio = static_cast<double>(gateUpRank_) / spec_.lora.adapter.rank;
        config["rank_pattern"] = {{"gate_up_proj", gateUpRank_}};
        config["alpha_pattern"] = {{"gate_up_proj", spec_.lora.adapter.alpha * ratio}};
      }
    }
    return config.dump(2) + "\n";
  }

 private:
  // Block `block`'s experts' adapters, each expert's a part of PEFT's fused tensors.
  void addExperts(int64_t block) {
    const int64_t r = spec_.lora.adapter.rank, experts = spec_.moe.experts;
    const int64_t h = spec_.hidden, ffn = spec_.moe.expertFfn;
    const bool down = spec_.lora.targets.count("down") > 0;
    const bool gateUp = spec_.lora.targets.count("gate") > 0;
    const std::string module =
        "base_model.model.model.layers." + std::to_string(block) + ".mlp.experts";
    for (const std::string target : {"gate", "up", "down"}) {
      if (!spec_.lora.targets.count(target)) continue;
      const bool isDown = target == "down";
      const int64_t fusedRank = isDown ? r : gateUpRank_;
      const int64_t in = isDown ? ffn : h, out = isDown ? h : 2 * ffn;
      const std::string peft = module + (!isDown && down && gateUp ? ".base_layer" : "") + ".lora_";
      for (int64_t e = 0; e < experts; ++e) {
        const std::string ours = "block" + std::to_string(block) + ".mlp.experts." +
                                 std::to_string(e) + "." + target + ".lora_";
        ExpertSlot slot{e, experts, fusedRank, 0, 0, isDown ? h : ffn, false};
        if (target == "up") {
          slot.rankBegin = fusedRank == r ? 0 : r;
          slot.rowBegin = ffn;
        }
        tensors_.push_back({ours + "a", peft + "A.weight", {fusedRank * experts, in}});
        expertSlots_[ours + "a"] = slot;
        slot.isB = true;
        tensors_.push_back({ours + "b", peft + "B.weight", {out, fusedRank * experts}});
        expertSlots_[ours + "b"] = slot;
      }
    }
  }

  // The elements of fused tensor `t` that are `slot`'s adapter, a view of
  // the adapter's shape.
  at::Tensor expertPart(const ExpertSlot& slot, const at::Tensor& t) const {
    const int64_t r = spec_.lora.adapter.rank;
    if (!slot.isB) return t.narrow(0, slot.expert * slot.fusedRank + slot.rankBegin, r);
    // Columns (rankBegin + k) E + e for k < r.
    return t.as_strided({slot.rows, r}, {t.stride(0), t.stride(1) * slot.experts},
                        t.storage_offset() + slot.rowBegin * t.stride(0) +
                            (slot.rankBegin * slot.experts + slot.expert) * t.stride(1));
  }

  // An adapter of rank 2r read into gate's and up's must keep them apart:
  // B's rows of gate zero in up's ranks and the other way round, or its
  // product is not the two adapters' (ConfigError naming the tensor).
  void checkFusedBlocks(const std::string& strataName, const ExpertSlot& slot,
                        const at::Tensor& t) const {
    if (!slot.isB || slot.fusedRank == spec_.lora.adapter.rank) return;
    ExpertSlot other = slot;
    other.rankBegin = slot.rankBegin == 0 ? spec_.lora.adapter.rank : 0;
    if (expertPart(other, t).abs().max().item<double>() != 0)
      throw ConfigError("PEFT adapter tensor for '" + strataName +
                        "' (experts.gate_up_proj at rank " + std::to_string(slot.fusedRank) +
                        ", twice finetune.rank) mixes gate's and up's ranks; Strata reads a "
                        "rank-2r gate_up_proj only as its own export writes it (gate's ranks "
                        "first, then up's), or one of rank r");
  }

  models::ModelSpec spec_;
  std::unique_ptr<models::HuggingFaceLayout> base_;
  int64_t gateUpRank_;
  std::vector<models::HuggingFaceTensor> tensors_;
  std::map<std::string, ExpertSlot> expertSlots_;
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

// target_parameters (a Mixtral's fused experts) as Strata's targets.
std::set<std::string> expertTargets(const json& parameters, const std::string& path) {
  std::set<std::string> targets;
  if (parameters.is_null()) return targets;
  if (!parameters.is_array())
    throw ConfigError("PEFT adapter config '" + path +
                      "': target_parameters must be a list of parameter names");
  for (const json& p : parameters) {
    if (p == "experts.gate_up_proj") {
      targets.insert({"gate", "up"});
    } else if (p == "experts.down_proj") {
      targets.insert("down");
    } else {
      throw ConfigError("PEFT adapter config '" + path + "': target parameter " + p.dump() +
                        " is not one Strata adapts (experts.gate_up_proj, experts.down_proj)");
    }
  }
  return targets;
}

// The rank of the experts' gate_up_proj adapter: r, or 2r where rank_pattern
// says so (Strata's export: gate's and up's adapters side by side) with
// alpha_pattern keeping alpha / r. Any other pattern gives some modules a
// rank or scale of their own, which Strata's LoRA has not.
int64_t gateUpRankOf(const json& config, const tensor_parallel::LoraOptions& adapter,
                     const std::string& path) {
  auto patternOf = [&](const char* name) -> std::optional<double> {
    if (!config.contains(name) || config.at(name).is_null() || config.at(name).empty())
      return std::nullopt;
    const json& pattern = config.at(name);
    if (!pattern.is_object() || pattern.size() != 1 || !pattern.contains("gate_up_proj") ||
        !pattern.at("gate_up_proj").is_number())
      throw ConfigError("PEFT adapter config '" + path + "': " + name + " " + pattern.dump() +
                        " gives some modules their own rank or alpha, which Strata's LoRA does "
                        "not (one rank and alpha for every adapter; gate_up_proj's at twice "
                        "them, gate's and up's side by side, is read)");
    return pattern.at("gate_up_proj").get<double>();
  };
  std::optional<double> rank = patternOf("rank_pattern"), alpha = patternOf("alpha_pattern");
  if (!rank && !alpha) return adapter.rank;
  const auto r = static_cast<double>(adapter.rank);
  if (rank != 2 * r || alpha != 2 * adapter.alpha)
    throw ConfigError("PEFT adapter config '" + path +
                      "': gate_up_proj's rank_pattern and alpha_pattern must be twice r and "
                      "lora_alpha (" +
                      std::to_string(2 * adapter.rank) + " and " +
                      std::to_string(2 * adapter.alpha) + ") or absent");
  return 2 * adapter.rank;
}

}  // namespace

namespace {

std::unique_ptr<PeftAdapterLayout> makeLayout(const models::ModelSpec& spec, int64_t gateUpRank) {
  if (!spec.lora.enabled())
    throw ConfigError("the model has no LoRA adapters (finetune.method is not lora)");
  const int64_t r = spec.lora.adapter.rank;
  // Written: gate's and up's side by side when both are adapted.
  if (gateUpRank == 0) gateUpRank = spec.lora.targets.count("gate") ? 2 * r : r;
  return std::make_unique<PeftAdapterLayout>(
      spec, models::modelFamily(spec.architecture).huggingFace(spec), gateUpRank);
}

}  // namespace

std::unique_ptr<models::HuggingFaceLayout> peftAdapterLayout(const models::ModelSpec& spec,
                                                             int64_t gateUpRank) {
  return makeLayout(spec, gateUpRank);
}

std::vector<std::pair<std::string, at::Tensor>> peftAdapterTensors(
    const models::ModelSpec& spec, const std::function<at::Tensor(const std::string&)>& parameter) {
  std::unique_ptr<PeftAdapterLayout> layout = makeLayout(spec, 0);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  std::set<std::string> written;
  for (const models::HuggingFaceTensor& t : layout->tensors())
    if (written.insert(t.huggingFace).second)
      tensors.emplace_back(t.huggingFace, layout->assemble(t, parameter));
  return tensors;
}

PeftAdapterConfig readAdapterConfig(const std::string& dir,
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
  PeftAdapterConfig read;
  tensor_parallel::LoraConfig& lora = read.lora;
  lora.adapter.rank = field("r").get<int64_t>();
  lora.adapter.alpha = field("lora_alpha").get<double>();
  lora.targets = strataTargets(field("target_modules"), path);
  for (const std::string& t : expertTargets(config.value("target_parameters", json()), path))
    lora.targets.insert(t);
  read.gateUpRank = gateUpRankOf(config, lora.adapter, path);
  if (!expected.enabled()) return read;
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
  return read;
}

}  // namespace strata::train

#include "strata/plan/train_config.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "plan_toml.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

using util::TomlEntry;
using Setter = std::function<void(ConfiguredRun&, const TomlEntry&)>;

// The defaults of strata/config/config.h.
ConfiguredRun strataTrainDefaults(const std::string& source) {
  ConfiguredRun run;
  run.model = {source, 4, 128, 4, 512, 256, 128};
  run.layout.microBatch = 4;
  run.globalBatch = 16;
  run.model.dropout = false;
  return run;
}

int wholeNumber(const TomlEntry& entry, int min) {
  int max = std::numeric_limits<int>::max();
  auto* value = std::get_if<int64_t>(&entry.value);
  if (!value || *value < min || *value > max)
    wrongValue(entry, "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  return static_cast<int>(*value);
}

int positive(const TomlEntry& entry) { return wholeNumber(entry, 1); }

int zeroStage(const TomlEntry& entry) {
  int stage = wholeNumber(entry, 0);
  if (stage > 3) wrongValue(entry, "0, 1, 2 or 3");
  return stage;
}

// A dropout rate, in [0, 1) as strata train takes it.
double rate(const TomlEntry& entry) {
  const std::string expected = "a number from 0 up to 1";
  double value = numberOf(entry, expected);
  if (value < 0 || value >= 1) wrongValue(entry, expected);
  return value;
}

bool boolean(const TomlEntry& entry) {
  if (auto* value = std::get_if<bool>(&entry.value)) return *value;
  wrongValue(entry, "true or false");
}

Family architecture(const TomlEntry& entry) {
  std::string name = stringOf(entry);
  std::vector<std::string> names = architectureNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return familyOf(name);
  std::string known;
  for (size_t i = 0; i < names.size(); ++i)
    known += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("\"" + names[i] + "\"");
  wrongValue(entry, known);
}

CpAlgorithm cpAlgorithm(const TomlEntry& entry) {
  std::string name = stringOf(entry);
  if (name == "ring") return CpAlgorithm::kRing;
  if (name == "all-to-all") return CpAlgorithm::kAllToAll;
  wrongValue(entry, "\"ring\" or \"all-to-all\"");
}

Dtype precision(const TomlEntry& entry) {
  std::string name = stringOf(entry);
  if (name == "fp32") return Dtype::Fp32;
  if (name == "bf16") return Dtype::Bf16;
  wrongValue(entry, "\"fp32\" or \"bf16\"");
}

// finetune.method: "full" (every weight trains) or "lora".
bool loraMethod(const TomlEntry& entry) {
  std::string name = stringOf(entry);
  if (name == "full" || name == "lora") return name == "lora";
  wrongValue(entry, "\"full\" or \"lora\"");
}

// finetune.base_dtype: "fp32", or "bf16" (whether it is bf16).
bool baseDtype(const TomlEntry& entry) {
  std::string name = stringOf(entry);
  if (name == "fp32" || name == "bf16") return name == "bf16";
  wrongValue(entry, "\"fp32\" or \"bf16\"");
}

std::vector<LoraTarget> loraTargets(const TomlEntry& entry) {
  const std::string expected = "an array of projections among q, k, v, o, gate, up and down";
  auto* names = std::get_if<util::TomlArray>(&entry.value);
  if (!names) wrongValue(entry, expected);
  std::vector<LoraTarget> targets;
  for (const util::TomlScalar& name : *names) {
    auto* text = std::get_if<std::string>(&name);
    std::vector<std::string> known = loraTargetNames();
    if (!text || std::find(known.begin(), known.end(), *text) == known.end())
      wrongValue(entry, expected);
    targets.push_back(loraTargetOf(*text));
  }
  return targets;
}

const std::map<std::string, Setter>& setters() {
  using R = ConfiguredRun;
  using E = TomlEntry;
  static const std::map<std::string, Setter> table = {
      {"model.layers", [](R& r, const E& e) { r.model.layers = positive(e); }},
      {"model.hidden", [](R& r, const E& e) { r.model.hidden = positive(e); }},
      {"model.heads", [](R& r, const E& e) { r.model.heads = positive(e); }},
      {"model.ffn", [](R& r, const E& e) { r.model.ffn = positive(e); }},
      {"model.vocab", [](R& r, const E& e) { r.model.vocab = positive(e); }},
      {"model.tied_embeddings", [](R& r, const E& e) { r.model.tiedEmbeddings = boolean(e); }},
      {"model.architecture", [](R& r, const E& e) { r.model.family = architecture(e); }},
      {"model.kv_heads", [](R& r, const E& e) { r.model.kvHeads = wholeNumber(e, 0); }},
      {"model.dropout", [](R& r, const E& e) { r.model.dropout = rate(e) > 0; }},
      {"model.moe.experts", [](R& r, const E& e) { r.model.moe.experts = wholeNumber(e, 0); }},
      {"model.moe.top_k", [](R& r, const E& e) { r.model.moe.topK = positive(e); }},
      {"model.moe.expert_ffn", [](R& r, const E& e) { r.model.moe.expertFfn = wholeNumber(e, 0); }},
      {"model.moe.shared_experts",
       [](R& r, const E& e) { r.model.moe.sharedExperts = wholeNumber(e, 0); }},
      {"model.moe.every", [](R& r, const E& e) { r.model.moe.every = positive(e); }},
      {"finetune.method", [](R& r, const E& e) { r.model.lora.enabled = loraMethod(e); }},
      {"finetune.rank", [](R& r, const E& e) { r.model.lora.rank = positive(e); }},
      {"finetune.targets", [](R& r, const E& e) { r.model.lora.targets = loraTargets(e); }},
      {"finetune.dropout", [](R& r, const E& e) { r.model.lora.dropout = rate(e) > 0; }},
      {"finetune.base_dtype", [](R& r, const E& e) { r.model.lora.bf16Base = baseDtype(e); }},
      {"train.seq_len", [](R& r, const E& e) { r.model.seqLen = positive(e); }},
      {"train.global_batch", [](R& r, const E& e) { r.globalBatch = positive(e); }},
      {"train.micro_batch", [](R& r, const E& e) { r.layout.microBatch = positive(e); }},
      {"train.precision", [](R& r, const E& e) { r.dtype = precision(e); }},
      {"parallel.pp", [](R& r, const E& e) { r.layout.pp = positive(e); }},
      {"parallel.dp", [](R& r, const E& e) { r.layout.dp = positive(e); }},
      {"parallel.tp", [](R& r, const E& e) { r.layout.tp = positive(e); }},
      {"parallel.cp", [](R& r, const E& e) { r.layout.cp = positive(e); }},
      {"parallel.ep", [](R& r, const E& e) { r.layout.ep = positive(e); }},
      {"parallel.cp_algorithm", [](R& r, const E& e) { r.layout.cpAlgorithm = cpAlgorithm(e); }},
      {"parallel.schedule", [](R& r, const E& e) { r.layout.schedule = stringOf(e); }},
      {"parallel.virtual_stages", [](R& r, const E& e) { r.layout.virtualStages = positive(e); }},
      {"parallel.zero", [](R& r, const E& e) { r.layout.zeroStage = zeroStage(e); }},
      {"parallel.sequence_parallel",
       [](R& r, const E& e) { r.layout.sequenceParallel = boolean(e); }},
      {"parallel.checkpoint_activations",
       [](R& r, const E& e) { r.layout.recompute = boolean(e); }},
      {"parallel.reshard_after_forward",
       [](R& r, const E& e) { r.layout.reshardAfterForward = boolean(e); }},
  };
  return table;
}

}  // namespace

ConfiguredRun parseTrainConfigText(const std::string& text, const std::string& source,
                                   const std::string& modelBase) {
  ConfiguredRun run = strataTrainDefaults(source);
  bool tiedGiven = false;
  std::vector<TomlEntry> entries = readPlanToml(modelBase, source + "'s init_from config");
  for (TomlEntry& entry : readPlanToml(text, source)) entries.push_back(std::move(entry));
  for (const TomlEntry& entry : entries) {
    auto setter = setters().find(entry.name());
    if (setter != setters().end()) setter->second(run, entry);
    tiedGiven = tiedGiven || entry.name() == "model.tied_embeddings";
  }
  // The default follows the architecture, wherever the file writes it.
  if (!tiedGiven) run.model.tiedEmbeddings = defaultTiedEmbeddings(run.model.family);
  // Autocast keeps bf16 activations; fp32 training keeps fp32 ones.
  run.precision.activationBytes = run.dtype == Dtype::Fp32 ? 4 : 2;
  run.model.validate();
  return run;
}

ConfiguredRun loadTrainConfigFile(const std::string& path, const std::string& modelBase) {
  return parseTrainConfigText(readTextFile(path, "config"), path, modelBase);
}

TrainingJob jobOn(const ConfiguredRun& run, const Cluster& cluster) {
  TrainingJob job;
  job.model = run.model;
  job.globalBatch = run.globalBatch;
  job.dtype = run.dtype;
  job.precision = run.precision;
  job.cluster = cluster;
  return job;
}

}  // namespace strata::plan

#include "plan_job.h"

#include <utility>
#include <vector>

#include "strata/plan/errors.h"
#include "strata/plan/train_config.h"
#include "strata/util/cli_flags.h"

namespace strata {
namespace {

constexpr int kDefaultGlobalBatch = 8;
constexpr const char* kDefaultModel = "gpt2-small";

// Each size flag with its value, in the order --help lists them.
std::vector<std::pair<const char*, std::optional<int>>> sizeFlags(const plan::ModelOverrides& s) {
  return {{"--layers", s.layers}, {"--hidden", s.hidden}, {"--heads", s.heads},
          {"--ffn", s.ffn},       {"--vocab", s.vocab},   {"--seq-len", s.seqLen}};
}

bool describesCustomModel(const plan::ModelOverrides& s) {
  return s.layers || s.hidden || s.heads || s.ffn || s.vocab;
}

plan::ModelDesc customModel(const plan::ModelOverrides& s) {
  std::string missing;
  for (const auto& [flag, value] : sizeFlags(s))
    if (!value) missing += (missing.empty() ? "" : ", ") + std::string(flag);
  if (!missing.empty())
    throw plan::PlanError(
        "a model given by its sizes needs --layers, --hidden, --heads, --ffn, --vocab and "
        "--seq-len; missing " +
        missing + " (or name a base model with --model or --config)");
  plan::ModelDesc m{"custom", *s.layers, *s.hidden, *s.heads, *s.ffn, *s.vocab, *s.seqLen};
  // Its family, kv heads and experts are the custom model's own, so its
  // name stays "custom".
  if (s.architecture) m.family = plan::familyOf(*s.architecture);
  m.tiedEmbeddings = plan::defaultTiedEmbeddings(m.family);
  m.kvHeads = s.kvHeads.value_or(0);
  const plan::MoeDesc dense;
  m.moe = {s.experts.value_or(dense.experts), s.topK.value_or(dense.topK),
           s.expertFfn.value_or(dense.expertFfn), s.sharedExperts.value_or(dense.sharedExperts),
           s.moeEvery.value_or(dense.every)};
  return m;
}

plan::ModelDesc baseModel(const PlanRequest& r, const std::optional<plan::ConfiguredRun>& config,
                          const std::optional<plan::MeasuredProfile>& profile) {
  if (config) return config->model;
  if (profile) return profile->model;
  if (r.model) return plan::modelPreset(*r.model);
  if (describesCustomModel(r.sizes)) return customModel(r.sizes);
  return plan::modelPreset(kDefaultModel);
}

plan::Cluster cluster(const PlanRequest& r) {
  plan::Cluster c =
      r.clusterFile.empty() ? plan::clusterPreset(r.cluster) : plan::loadClusterFile(r.clusterFile);
  if (r.nodes > 0) c.nodes = r.nodes;
  if (r.efficiency < 0 || r.efficiency > 1)
    throw plan::PlanError("--efficiency is a fraction of peak in (0, 1], got " +
                          std::to_string(r.efficiency));
  if (r.efficiency > 0) c.device.matmulEfficiency = r.efficiency;
  if (r.failuresPerDeviceHour) {
    if (!(*r.failuresPerDeviceHour >= 0))
      throw plan::PlanError("--failures-per-gpu-hour must be >= 0, got " +
                            std::to_string(*r.failuresPerDeviceHour));
    c.reliability.failuresPerDeviceHour = *r.failuresPerDeviceHour;
    c.reliability.failureSource = "--failures-per-gpu-hour";
  }
  if (r.restartSeconds) {
    if (!(*r.restartSeconds >= 0))
      throw plan::PlanError("--restart-seconds must be >= 0, got " +
                            std::to_string(*r.restartSeconds));
    c.reliability.restartSeconds = *r.restartSeconds;
  }
  return c;
}

// --finetune, --lora-rank and --lora-targets over the model's (a config's
// [finetune], else full fine-tuning), validated as strata train would.
void applyFinetune(const PlanRequest& r, plan::ModelDesc& model) {
  if (!r.finetune.empty()) {
    if (r.finetune != "full" && r.finetune != "lora")
      throw plan::PlanError("--finetune must be full or lora, got '" + r.finetune + "'");
    model.lora.enabled = r.finetune == "lora";
  }
  bool loraFlags = r.loraRank || !r.loraTargets.empty() || r.loraDropout || !r.baseDtype.empty();
  if (loraFlags && !model.lora.enabled)
    throw plan::PlanError(
        "--lora-rank, --lora-targets, --lora-dropout and --base-dtype describe LoRA adapters on a "
        "frozen base: add --finetune lora (or use a config with finetune.method = \"lora\")");
  if (!r.baseDtype.empty()) {
    if (r.baseDtype != "fp32" && r.baseDtype != "bf16")
      throw plan::PlanError("--base-dtype must be fp32 or bf16, got '" + r.baseDtype + "'");
    model.lora.bf16Base = r.baseDtype == "bf16";
  }
  if (r.loraRank) model.lora.rank = *r.loraRank;
  if (r.loraDropout) {
    if (!(*r.loraDropout >= 0 && *r.loraDropout < 1))
      throw plan::PlanError("--lora-dropout must be in [0, 1), got " +
                            std::to_string(*r.loraDropout));
    model.lora.dropout = *r.loraDropout > 0;
  }
  if (!r.loraTargets.empty()) {
    model.lora.targets.clear();
    for (const std::string& name : splitList(r.loraTargets))
      model.lora.targets.push_back(plan::loraTargetOf(name));
  }
  model.validate();
}

}  // namespace

PlannedJob makePlannedJob(const PlanRequest& r) {
  if (r.model && !r.config.empty())
    throw plan::PlanError("--model " + *r.model + " and --config " + r.config +
                          " both name the model; give one of them");
  std::optional<plan::ConfiguredRun> config;
  if (!r.config.empty())
    config = plan::loadTrainConfigFile(r.config, r.initFromModel ? r.initFromModel(r.config) : "");
  PlannedJob planned;
  plan::TrainingJob& job = planned.job;
  if (!r.profile.empty()) job.profile = plan::loadProfileFile(r.profile);
  job.model = plan::overrideSizes(baseModel(r, config, job.profile), r.sizes);
  applyFinetune(r, job.model);
  job.globalBatch = r.globalBatch.value_or(config ? config->globalBatch : kDefaultGlobalBatch);
  if (config) {
    job.dtype = config->dtype;
    job.precision = config->precision;
    planned.configLayout = config->layout;
  }
  if (job.profile) {
    job.dtype = job.profile->dtype;
    job.precision = plan::precisionOf(*job.profile);
  }
  job.cluster = cluster(r);
  job.tokens = r.tokens;
  job.allowCrossNodeTp = r.allowCrossNodeTp;
  job.evenStages = r.evenStages;
  return planned;
}

}  // namespace strata

// The job `strata plan` predicts, from its flags: the model (a preset, the
// model of a `strata train` config, of a measured profile, or sizes given
// one by one), the cluster, the batch and the precision.
//
// The model is --config's, else --profile's, else --model's preset; each
// size flag then replaces that size. Without any of the three, size flags
// other than --seq-len describe a custom model and must all be given (ffn
// included), of --architecture's family (GPT when not given, its head tied
// unless llama) and with the --moe-* flags' experts; --seq-len,
// --architecture, --kv-heads and the --moe-* flags alone change the default
// preset, gpt2-small. With
// --config, the global batch and precision are the file's too (--global-batch
// still overrides), and its layout is kept for `--layout config`; a profile's
// measured precision wins over the file's.
//
// Nothing blocks. makePlannedJob() throws PlanError for input that makes no
// job (--model with --config, a custom model missing sizes, sizes that make
// no model, an unknown architecture, an unreadable file, a bad --efficiency),
// naming the flags and values at fault.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "strata/plan/cost_model.h"
#include "strata/plan/model_desc.h"

namespace strata {

// The [model] TOML of the weights a strata train config file starts from
// (its checkpoint.init_from's config.json), "" for none: strata train's
// reading, which the planner, free of LibTorch, is handed.
using ConfigModelReader = std::function<std::string(const std::string& configPath)>;

struct PlanRequest {
  std::optional<std::string> model;  // --model
  std::string config, profile;       // --config, --profile ("": none)
  plan::ModelOverrides sizes;        // --layers, ..., --architecture, --kv-heads, --moe-*
  // --finetune ("full" or "lora"), --lora-rank and --lora-targets (a
  // comma-separated list): over --config's [finetune]; unset: its, else full.
  std::string finetune;
  std::optional<int> loraRank;
  std::string loraTargets;
  std::optional<double> loraDropout;  // --lora-dropout
  std::string baseDtype;              // --base-dtype: fp32 or bf16; empty: the config's
  std::string cluster = "cpu-local", clusterFile;
  int nodes = 0;                   // 0: the cluster's own count
  std::optional<int> globalBatch;  // else the config's, else 8
  double tokens = 0, efficiency = 0;
  // --failures-per-gpu-hour and --restart-seconds: over the cluster's.
  std::optional<double> failuresPerDeviceHour, restartSeconds;
  bool allowCrossNodeTp = false, evenStages = false;
  ConfigModelReader initFromModel;  // read before --config's [model]; unset: none
};

struct PlannedJob {
  plan::TrainingJob job;
  std::optional<plan::Layout> configLayout;  // the layout --config's file trains with
};

PlannedJob makePlannedJob(const PlanRequest& request);

}  // namespace strata

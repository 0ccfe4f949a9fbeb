// What `strata plan --config` takes from a `strata train` configuration file
// (strata/config/config.h): the model, its sequence length, the global
// batch, the precision and the layout that `strata train --config FILE`
// would train with. The planner reads the file itself, staying free of the
// trainer and of LibTorch; tests/train checks that both read a file alike.
//
// Keys read, in every TOML form strata train accepts (`[model]` tables,
// dotted keys, inline tables):
//   [model]     layers, hidden, heads, ffn, vocab, tied_embeddings,
//               architecture ("strata", "gpt2" or "llama"), kv_heads (0: as
//               many as heads), dropout (above 0: its masks are kept)
//   [model.moe] experts (0: dense), top_k, expert_ffn, shared_experts, every
//   [finetune]  method ("full" or "lora"), rank, targets (LoRA's, model_desc.h)
//   [train]     seq_len, global_batch, micro_batch, precision ("fp32" or "bf16")
//   [parallel]  pp, dp, tp, cp, cp_algorithm ("ring" or "all-to-all"), ep,
//               schedule, virtual_stages, zero (0 to 3), sequence_parallel,
//               checkpoint_activations, reshard_after_forward
// A key the file leaves out takes strata train's default; tied_embeddings's
// is the architecture's (false for llama, true otherwise). The other keys
// (model.context, model.rope_theta, model.rms_norm_eps, [model.rope_scaling],
// model.moe's aux_loss_coeff, z_loss_coeff, capacity_factor and
// normalize_top_k, finetune's alpha, dropout and init_adapter, the
// optimizer's, [data], [checkpoint]) change no plan
// (the planner takes routing as balanced, which a capacity factor of 1 or
// more leaves whole); they are strata train's to check and are ignored here.
//
// Model state is fp32 weights, gradients and AdamW moments under either
// precision, as strata train keeps them (bf16 is autocast: only the compute
// runs in bf16); activations are kept at 4 bytes a value under fp32 and
// taken at 2 under bf16 (autocast keeps some fp32: an approximation).
//
// Nothing blocks. Throws PlanError for an unreadable file, a TOML syntax
// error (file, line and column), a value of the wrong type or out of range
// (file, line, key and value) and sizes that make no model
// (ModelDesc::validate).
#pragma once

#include <string>

#include "strata/plan/cluster.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/layout.h"
#include "strata/plan/memory.h"
#include "strata/plan/model_desc.h"

namespace strata::plan {

struct ConfiguredRun {
  ModelDesc model;  // named after the file
  Layout layout;
  int globalBatch = 0;
  Dtype dtype = Dtype::Fp32;
  Precision precision{4, 4, 8, 4};
};

// `modelBase`: [model] settings read before the file's, which override
// them: those of the config.json beside the file's checkpoint.init_from
// weights, as strata train takes them (the caller reads that file: the
// planner does not know Hugging Face's formats).
ConfiguredRun parseTrainConfigText(const std::string& text, const std::string& source,
                                   const std::string& modelBase = "");
ConfiguredRun loadTrainConfigFile(const std::string& path, const std::string& modelBase = "");

// The planner's job for `run` on `cluster`: its model, global batch, dtype
// and precision (its layout is run.layout).
TrainingJob jobOn(const ConfiguredRun& run, const Cluster& cluster);

}  // namespace strata::plan

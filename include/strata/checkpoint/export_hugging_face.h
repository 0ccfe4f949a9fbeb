// `strata export`: a checkpoint of any layout as a Hugging Face model —
// GPT2LMHeadModel for architecture gpt2, LlamaForCausalLM for llama
// (models/hugging_face.h has each family's names and layouts) — written as
// MODEL.safetensors, or shards of it with an index (safetensors_set.h),
// plus config.json and the run's tokenizer files in the same folder.
//
// The whole model is rebuilt in one process (tp 1, one stage) and filled
// through the checkpoint's tensor index, as `strata checkpoint convert`
// fills a rank, so a checkpoint of any pp x dp x tp, with or without ZeRO,
// exports alike; the vocabulary is the model's, without tp padding.
//
// Throws CheckpointError for a checkpoint that is incomplete, format 1, or
// of an architecture without a Hugging Face equivalent (strata: its exact
// GELU means something else in GPT-2 implementations), ConfigError for a
// format other than safetensors and peft, for a LoRA checkpoint asked for
// safetensors without mergeAdapter (its adapters would be lost), and for
// peft or mergeAdapter on a checkpoint without adapters. Nothing blocks but
// the file I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::train {

struct ExportOptions {
  std::string checkpoint;  // a checkpoint folder (its latest complete step) or a step directory
  // "safetensors": the model; "peft": a LoRA run's adapters alone, in PEFT's
  // format (peft_adapter.h), into the folder `out`.
  std::string format = "safetensors";
  std::string out;  // MODEL.safetensors; config.json goes next to it (peft: a folder)
  // Shards of at most this many bytes (MODEL-0000N-of-0000M.safetensors and
  // MODEL.safetensors.index.json) when the model is larger; 0: one file.
  int64_t maxShardBytes = 0;
  // A LoRA run's adapters folded into the weights (W += alpha / r B A): a
  // plain model. A LoRA checkpoint exports as safetensors only so.
  bool mergeAdapter = false;
};

struct ExportedFiles {
  std::vector<std::string> weights;  // the .safetensors file, or the shards and the index last
  std::string config;                // config.json
  // The run's tokenizer files, copied beside them (copyTokenizerFiles in
  // data/tokenizer.h; none for the byte tokenizer).
  std::vector<std::string> tokenizer;
  // Why the tokenizer was not copied ("" when it was): its path, as the run
  // gave it, is not found from here.
  std::string tokenizerNotCopied;
};

ExportedFiles exportCheckpoint(const ExportOptions& options);

}  // namespace strata::train

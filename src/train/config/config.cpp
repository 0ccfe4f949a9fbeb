#include "strata/train/config/config.h"

#include <sstream>

namespace strata::train {

std::vector<std::string> TrainConfig::dataFiles() const {
  std::vector<std::string> files;
  std::istringstream list(data.files);
  std::string file;
  while (std::getline(list, file, ','))
    if (!file.empty()) files.push_back(file);
  return files;
}

int64_t TrainConfig::microBatches() const {
  int64_t perMicroBatchStep = train.microBatch * parallel.dp;
  return perMicroBatchStep > 0 ? train.globalBatch / perMicroBatchStep : 0;
}

// Captureless lambdas convert to the function pointers ConfigOption holds.
const std::vector<ConfigOption>& configOptions() {
  using C = TrainConfig;
  static const std::vector<ConfigOption> kOptions = {
      {"model", "layers", "layers", "transformer blocks",
       +[](C& c) -> int64_t& { return c.model.layers; }},
      {"model", "hidden", "hidden", "model width",
       +[](C& c) -> int64_t& { return c.model.hidden; }},
      {"model", "heads", "heads", "attention heads",
       +[](C& c) -> int64_t& { return c.model.heads; }},
      {"model", "ffn", "ffn", "feed-forward width", +[](C& c) -> int64_t& { return c.model.ffn; }},
      {"model", "vocab", "vocab", "vocabulary size (>= 256 for bytes)",
       +[](C& c) -> int64_t& { return c.model.vocab; }},
      {"model", "context", "context", "longest sequence the model accepts",
       +[](C& c) -> int64_t& { return c.model.context; }},
      {"model", "dropout", "dropout", "dropout probability",
       +[](C& c) -> double& { return c.model.dropout; }},
      {"model", "tied_embeddings", "tied-embeddings", "LM head shares the token embedding",
       +[](C& c) -> bool& { return c.model.tiedEmbeddings; }},
      {"parallel", "pp", "pp", "pipeline-parallel degree",
       +[](C& c) -> int64_t& { return c.parallel.pp; }},
      {"parallel", "dp", "dp", "data-parallel degree",
       +[](C& c) -> int64_t& { return c.parallel.dp; }},
      {"parallel", "tp", "tp", "tensor-parallel degree",
       +[](C& c) -> int64_t& { return c.parallel.tp; }},
      {"parallel", "schedule", "schedule",
       "pipeline schedule: gpipe, 1f1b, interleaved-1f1b, zb-h1",
       +[](C& c) -> std::string& { return c.parallel.schedule; }},
      {"parallel", "virtual_stages", "virtual-stages", "model chunks per pipeline rank",
       +[](C& c) -> int64_t& { return c.parallel.virtualStages; }},
      {"parallel", "zero", "zero",
       "ZeRO stage over dp: 0 off, 1 shards AdamW state, 2 also the gradients",
       +[](C& c) -> int64_t& { return c.parallel.zero; }},
      {"parallel", "sequence_parallel", "sequence-parallel",
       "split LayerNorm, dropout and residual activations along the sequence over tp",
       +[](C& c) -> bool& { return c.parallel.sequenceParallel; }},
      {"parallel", "checkpoint_activations", "checkpoint-activations",
       "keep only stage inputs; backward recomputes the forward",
       +[](C& c) -> bool& { return c.parallel.checkpointActivations; }},
      {"train", "steps", "steps", "optimizer steps",
       +[](C& c) -> int64_t& { return c.train.steps; }},
      {"train", "global_batch", "global-batch", "sequences per step over all replicas",
       +[](C& c) -> int64_t& { return c.train.globalBatch; }},
      {"train", "micro_batch", "micro-batch", "sequences per micro-batch",
       +[](C& c) -> int64_t& { return c.train.microBatch; }},
      {"train", "seq_len", "seq-len", "tokens per training sequence",
       +[](C& c) -> int64_t& { return c.train.seqLen; }},
      {"train", "lr", "lr", "peak learning rate", +[](C& c) -> double& { return c.train.lr; }},
      {"train", "min_lr", "min-lr", "learning rate at the end of the cosine decay",
       +[](C& c) -> double& { return c.train.minLr; }},
      {"train", "warmup_steps", "warmup-steps", "linear warmup steps",
       +[](C& c) -> int64_t& { return c.train.warmupSteps; }},
      {"train", "weight_decay", "weight-decay", "AdamW weight decay",
       +[](C& c) -> double& { return c.train.weightDecay; }},
      {"train", "beta1", "beta1", "AdamW beta1", +[](C& c) -> double& { return c.train.beta1; }},
      {"train", "beta2", "beta2", "AdamW beta2", +[](C& c) -> double& { return c.train.beta2; }},
      {"train", "eps", "eps", "AdamW epsilon", +[](C& c) -> double& { return c.train.eps; }},
      {"train", "grad_clip", "grad-clip", "max global gradient norm (0: off)",
       +[](C& c) -> double& { return c.train.gradClip; }},
      {"train", "seed", "seed", "random seed", +[](C& c) -> int64_t& { return c.train.seed; }},
      {"train", "precision", "precision", "fp32 or bf16",
       +[](C& c) -> std::string& { return c.train.precision; }},
      {"train", "threads", "threads", "intra-op threads per worker",
       +[](C& c) -> int64_t& { return c.train.threads; }},
      {"train", "log_every", "log-every", "steps between progress reports",
       +[](C& c) -> int64_t& { return c.train.logEvery; }},
      {"train", "eval_every", "eval-every", "steps between evaluations (0: at the end)",
       +[](C& c) -> int64_t& { return c.train.evalEvery; }},
      {"train", "eval_batches", "eval-batches", "validation batches per evaluation",
       +[](C& c) -> int64_t& { return c.train.evalBatches; }},
      {"train", "out_dir", "out-dir", "folder for metrics and pictures",
       +[](C& c) -> std::string& { return c.train.outDir; }},
      {"data", "files", "data-files", "comma-separated UTF-8 files (empty: generated corpus)",
       +[](C& c) -> std::string& { return c.data.files; }},
      {"data", "corpus_bytes", "corpus-bytes", "size of the generated corpus",
       +[](C& c) -> int64_t& { return c.data.corpusBytes; }},
      {"data", "corpus_seed", "corpus-seed", "seed of the generated corpus",
       +[](C& c) -> int64_t& { return c.data.corpusSeed; }},
      {"data", "validation_fraction", "val-fraction", "share of tokens held out for validation",
       +[](C& c) -> double& { return c.data.validationFraction; }},
      {"data", "shuffle", "shuffle", "shuffle training windows every epoch",
       +[](C& c) -> bool& { return c.data.shuffle; }},
      {"checkpoint", "dir", "checkpoint-dir", "checkpoint folder (empty: none)",
       +[](C& c) -> std::string& { return c.checkpoint.dir; }},
      {"checkpoint", "every", "checkpoint-every", "steps between checkpoints (0: at the end)",
       +[](C& c) -> int64_t& { return c.checkpoint.every; }},
      {"checkpoint", "resume", "resume", "continue from the latest complete checkpoint",
       +[](C& c) -> bool& { return c.checkpoint.resume; }},
  };
  return kOptions;
}

}  // namespace strata::train

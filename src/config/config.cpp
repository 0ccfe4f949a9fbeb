#include "strata/config/config.h"

#include "strata/schedule/registry.h"

namespace strata::train {

int64_t TrainConfig::microBatches() const {
  int64_t perMicroBatchStep = train.microBatch * parallel.dp;
  return perMicroBatchStep > 0 ? train.globalBatch / perMicroBatchStep : 0;
}

std::string layoutText(const ParallelConfig& p) {
  std::string text = "pp " + std::to_string(p.pp) + " x dp " + std::to_string(p.dp);
  if (p.cp != 1) text += " x cp " + std::to_string(p.cp);
  return text + " x tp " + std::to_string(p.tp);
}

std::vector<int> pipelineStageRanks(const ParallelConfig& p) {
  return schedule::stagePlacement(p.schedule, static_cast<int>(p.pp),
                                  static_cast<int>(p.virtualStages));
}

bool defaultTiedEmbeddings(const std::string& architecture) {
  // Llama-family checkpoints mostly have a head of their own (Llama 2 and 3
  // 8B and up, Mistral); GPT-2's head is its token embedding.
  return architecture != kLlamaArchitecture;
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
      {"model", "vocab", "vocab", "vocabulary size (at least the tokenizer's: 256 for bytes)",
       +[](C& c) -> int64_t& { return c.model.vocab; }},
      {"model", "context", "context", "longest sequence the model accepts",
       +[](C& c) -> int64_t& { return c.model.context; }},
      {"model", "dropout", "dropout", "dropout probability",
       +[](C& c) -> double& { return c.model.dropout; }},
      {"model", "tied_embeddings", "tied-embeddings",
       "LM head shares the token embedding (default: true, false for llama)",
       +[](C& c) -> bool& { return c.model.tiedEmbeddings; }},
      {"model", "architecture", "architecture",
       "strata (exact GELU), gpt2 (GPT-2's: tanh GELU, tied head; exportable to Hugging Face) "
       "or llama (RMSNorm, rotary positions, grouped-query attention, SwiGLU)",
       +[](C& c) -> std::string& { return c.model.architecture; }},
      {"model", "kv_heads", "kv-heads",
       "llama: key/value heads of grouped-query attention (divides heads; 0: as many as heads)",
       +[](C& c) -> int64_t& { return c.model.kvHeads; }},
      {"model", "rope_theta", "rope-theta", "llama: rotary embedding base (Llama 3: 500000)",
       +[](C& c) -> double& { return c.model.ropeTheta; }},
      {"model", "rms_norm_eps", "rms-norm-eps", "llama: RMSNorm epsilon",
       +[](C& c) -> double& { return c.model.rmsNormEps; }},
      {"model.rope_scaling", "type", "rope-scaling",
       "llama: rotary frequency scaling for long contexts: none or llama3 (Llama 3.1's)",
       +[](C& c) -> std::string& { return c.model.ropeScaling.type; }},
      {"model.rope_scaling", "factor", "rope-scaling-factor",
       "llama3 scaling: how much slower the slowest frequencies turn",
       +[](C& c) -> double& { return c.model.ropeScaling.factor; }},
      {"model.rope_scaling", "low_freq_factor", "rope-low-freq-factor",
       "llama3 scaling: wavelengths above original_context / this are slowed whole",
       +[](C& c) -> double& { return c.model.ropeScaling.lowFreqFactor; }},
      {"model.rope_scaling", "high_freq_factor", "rope-high-freq-factor",
       "llama3 scaling: wavelengths below original_context / this are kept",
       +[](C& c) -> double& { return c.model.ropeScaling.highFreqFactor; }},
      {"model.rope_scaling", "original_context", "rope-original-context",
       "llama3 scaling: the context the model was pretrained at",
       +[](C& c) -> int64_t& { return c.model.ropeScaling.originalContext; }},
      {"model.moe", "experts", "moe-experts",
       "experts in each mixture-of-experts MLP (0: dense MLPs)",
       +[](C& c) -> int64_t& { return c.model.moe.experts; }},
      {"model.moe", "top_k", "moe-top-k", "experts each token is routed to",
       +[](C& c) -> int64_t& { return c.model.moe.topK; }},
      {"model.moe", "expert_ffn", "moe-expert-ffn", "each expert's SwiGLU inner width",
       +[](C& c) -> int64_t& { return c.model.moe.expertFfn; }},
      {"model.moe", "shared_experts", "moe-shared-experts",
       "always-active experts besides the routed ones",
       +[](C& c) -> int64_t& { return c.model.moe.sharedExperts; }},
      {"model.moe", "every", "moe-every",
       "an MoE MLP in every Nth block (1: every block; 2: blocks 1, 3, ...)",
       +[](C& c) -> int64_t& { return c.model.moe.every; }},
      {"model.moe", "aux_loss_coeff", "moe-aux-loss-coeff",
       "weight of the sequence-wise load-balancing loss",
       +[](C& c) -> double& { return c.model.moe.auxLossCoeff; }},
      {"model.moe", "z_loss_coeff", "moe-z-loss-coeff", "weight of the router z-loss",
       +[](C& c) -> double& { return c.model.moe.zLossCoeff; }},
      {"model.moe", "capacity_factor", "moe-capacity-factor",
       "each expert takes at most factor x seq_len x top_k / experts tokens of a sequence, "
       "dropping the rest (0: dropless)",
       +[](C& c) -> double& { return c.model.moe.capacityFactor; }},
      {"model.moe", "normalize_top_k", "moe-normalize-top-k", "rescale the top_k gates to sum to 1",
       +[](C& c) -> bool& { return c.model.moe.normalizeTopK; }},
      {"parallel", "pp", "pp", "pipeline-parallel degree",
       +[](C& c) -> int64_t& { return c.parallel.pp; }},
      {"parallel", "dp", "dp", "data-parallel degree",
       +[](C& c) -> int64_t& { return c.parallel.dp; }},
      {"parallel", "cp", "cp",
       "context-parallel degree: each sequence split over cp ranks (seq_len divisible by 2 x cp)",
       +[](C& c) -> int64_t& { return c.parallel.cp; }},
      {"parallel", "tp", "tp", "tensor-parallel degree",
       +[](C& c) -> int64_t& { return c.parallel.tp; }},
      {"parallel", "ep", "ep",
       "expert-parallel degree: the experts spread over ep ranks of dp x cp (divides dp x cp and "
       "model.moe.experts)",
       +[](C& c) -> int64_t& { return c.parallel.ep; }},
      {"parallel", "cp_algorithm", "cp-algorithm",
       "how attention sees the whole sequence under cp: ring, or all-to-all (cp divides each tp "
       "rank's heads and kv heads)",
       +[](C& c) -> std::string& { return c.parallel.cpAlgorithm; }},
      {"parallel", "schedule", "schedule",
       "pipeline schedule: gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v or dualpipe-v (the last two "
       "cut the model into 2 x pp stages in a V)",
       +[](C& c) -> std::string& { return c.parallel.schedule; }},
      {"parallel", "virtual_stages", "virtual-stages", "model chunks per pipeline rank",
       +[](C& c) -> int64_t& { return c.parallel.virtualStages; }},
      {"parallel", "partition", "partition",
       "how layers are cut into pipeline stages: even (layer counts), or balanced (the layers "
       "timed on every rank, the head with its loss and one block for each kind, the cut "
       "balanced by time)",
       +[](C& c) -> std::string& { return c.parallel.partition; }},
      {"parallel", "stage_layers", "stage-layers",
       "an explicit cut: layers per stage, pp x virtual_stages counts of the embedding, the "
       "blocks and the head (wins over partition)",
       +[](C& c) -> std::vector<int64_t>& { return c.parallel.stageLayers; }},
      {"parallel", "elastic", "elastic-policy",
       "on a world of another size (an elastic restart): off, or dp to keep tp and pp and resize "
       "dp, keeping the global batch",
       +[](C& c) -> std::string& { return c.parallel.elastic; }},
      {"parallel", "zero", "zero",
       "ZeRO stage over dp: 0 off, 1 shards AdamW state, 2 also the gradients, 3 also the "
       "parameters",
       +[](C& c) -> int64_t& { return c.parallel.zero; }},
      {"parallel", "reshard_after_forward", "reshard-after-forward",
       "ZeRO-3: release each layer after its forward (off: keep a stage's layers gathered across "
       "the step's micro-batches)",
       +[](C& c) -> bool& { return c.parallel.reshardAfterForward; }},
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
      {"train", "max_skipped_steps", "max-skipped-steps",
       "roll back to the latest checkpoint after this many non-finite steps in a row (0: only "
       "skip them)",
       +[](C& c) -> int64_t& { return c.train.maxSkippedSteps; }},
      {"train", "spike_zscore", "spike-zscore",
       "log a loss this many standard deviations above the last 50 steps' mean (0: off)",
       +[](C& c) -> double& { return c.train.spikeZscore; }},
      {"train", "spike_rollback", "spike-rollback",
       "at a loss spike, roll back to the latest checkpoint and go on past the data that caused it",
       +[](C& c) -> bool& { return c.train.spikeRollback; }},
      {"train", "seed", "seed", "random seed", +[](C& c) -> int64_t& { return c.train.seed; }},
      {"train", "precision", "precision", "fp32 or bf16",
       +[](C& c) -> std::string& { return c.train.precision; }},
      {"train", "device", "device", "cpu, or cuda (GPU LOCAL_RANK of each node)",
       +[](C& c) -> std::string& { return c.train.device; }},
      {"train", "threads", "threads", "intra-op threads per worker",
       +[](C& c) -> int64_t& { return c.train.threads; }},
      {"train", "log_every", "log-every", "steps between progress reports",
       +[](C& c) -> int64_t& { return c.train.logEvery; }},
      {"train", "straggler_every", "straggler-every",
       "steps between comparisons of the ranks' compute time (0: never)",
       +[](C& c) -> int64_t& { return c.train.stragglerEvery; }},
      {"train", "straggler_factor", "straggler-factor",
       "a rank computing this many times the median is named a straggler",
       +[](C& c) -> double& { return c.train.stragglerFactor; }},
      {"train", "eval_every", "eval-every", "steps between evaluations (0: at the end)",
       +[](C& c) -> int64_t& { return c.train.evalEvery; }},
      {"train", "eval_batches", "eval-batches", "validation batches per evaluation",
       +[](C& c) -> int64_t& { return c.train.evalBatches; }},
      {"train", "out_dir", "out-dir", "folder for metrics and pictures",
       +[](C& c) -> std::string& { return c.train.outDir; }},
      {"data", "files", "data-files", "UTF-8 files to train on (empty: generated corpus)",
       +[](C& c) -> std::vector<std::string>& { return c.data.files; }},
      {"data", "prepared", "data-prepared",
       "PREFIX of a prepared dataset (strata data prepare): PREFIX.bin and PREFIX.idx",
       +[](C& c) -> std::string& { return c.data.prepared; }},
      {"data", "tokenizer", "tokenizer",
       "byte, a Hugging Face tokenizer.json (or a directory with one), a directory of GPT-2 BPE "
       "files (encoder.json and vocab.bpe) or a SentencePiece .model file",
       +[](C& c) -> std::string& { return c.data.tokenizer; }},
      {"data", "corpus_bytes", "corpus-bytes", "size of the generated corpus",
       +[](C& c) -> int64_t& { return c.data.corpusBytes; }},
      {"data", "corpus_seed", "corpus-seed", "seed of the generated corpus",
       +[](C& c) -> int64_t& { return c.data.corpusSeed; }},
      {"data", "validation_fraction", "val-fraction",
       "share of tokens (of documents, with data.prepared) held out for validation",
       +[](C& c) -> double& { return c.data.validationFraction; }},
      {"data", "shuffle", "shuffle", "shuffle training windows every epoch",
       +[](C& c) -> bool& { return c.data.shuffle; }},
      {"data", "loss_on", "loss-on",
       "targets in the loss: all, assistant (a --chat dataset's assistant tokens) or auto "
       "(assistant "
       "when the prepared data has a mask)",
       +[](C& c) -> std::string& { return c.data.lossOn; }},
      {"data", "pack", "pack",
       "keep the documents packed into a window apart: attention and positions restart at each "
       "document (needs data.prepared)",
       +[](C& c) -> bool& { return c.data.pack; }},
      {"data", "split_across_windows", "split-across-windows",
       "with data.pack: a document that does not fit in the rest of a window continues in the "
       "next instead of starting it (no padding; the parts do not see each other)",
       +[](C& c) -> bool& { return c.data.splitAcrossWindows; }},
      {"checkpoint", "dir", "checkpoint-dir", "checkpoint folder (empty: none)",
       +[](C& c) -> std::string& { return c.checkpoint.dir; }},
      {"checkpoint", "every", "checkpoint-every", "steps between checkpoints (0: at the end)",
       +[](C& c) -> int64_t& { return c.checkpoint.every; }},
      {"checkpoint", "resume", "resume", "continue from the latest complete checkpoint",
       +[](C& c) -> bool& { return c.checkpoint.resume; }},
      {"checkpoint", "keep", "keep-checkpoints",
       "complete checkpoints to keep, the newest (0: all); older ones go once a newer is complete",
       +[](C& c) -> int64_t& { return c.checkpoint.keep; }},
      {"checkpoint", "on_save_error", "on-save-error",
       "when a save fails (a full disk): stop, or continue with a warning",
       +[](C& c) -> std::string& { return c.checkpoint.onSaveError; }},
      {"checkpoint", "async", "checkpoint-async",
       "write checkpoints on a background thread while training goes on",
       +[](C& c) -> bool& { return c.checkpoint.async; }},
      {"checkpoint", "init_from", "init-from",
       "start from Hugging Face weights: a .safetensors file, a sharded index or a directory "
       "(architecture gpt2 or llama); a resumed checkpoint wins",
       +[](C& c) -> std::string& { return c.checkpoint.initFrom; }},
      {"finetune", "method", "finetune",
       "full (every weight trains) or lora (adapters on a frozen base)",
       +[](C& c) -> std::string& { return c.finetune.method; }},
      {"finetune", "rank", "lora-rank", "the LoRA adapters' rank r",
       +[](C& c) -> int64_t& { return c.finetune.rank; }},
      {"finetune", "alpha", "lora-alpha", "the LoRA update's scale is alpha / r",
       +[](C& c) -> double& { return c.finetune.alpha; }},
      {"finetune", "dropout", "lora-dropout", "dropout on the adapters' input",
       +[](C& c) -> double& { return c.finetune.dropout; }},
      {"finetune", "targets", "lora-targets",
       "the projections with adapters, of q, k, v, o, gate, up, down",
       +[](C& c) -> std::vector<std::string>& { return c.finetune.targets; }},
      {"finetune", "init_adapter", "init-adapter",
       "start the LoRA adapters from a PEFT adapter folder (adapter_model.safetensors); a resumed "
       "checkpoint wins",
       +[](C& c) -> std::string& { return c.finetune.initAdapter; }},
      {"finetune", "base_dtype", "base-dtype",
       "the frozen base's projection weights kept in fp32, or in bf16 (train.precision = bf16)",
       +[](C& c) -> std::string& { return c.finetune.baseDtype; }},
  };
  return kOptions;
}

}  // namespace strata::train

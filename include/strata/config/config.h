// Every option of `strata train`, with its default. The same options come
// from a TOML file (config_file.h) and from command-line flags
// (train_flags.h); configOptions() is the one table that names them all.
//
// Plain data: nothing here blocks or throws. validateConfig()
// (validate_config.h) checks a config against a world size.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "strata/expert_parallel/moe_options.h"
#include "strata/tensor_parallel/rope_scaling.h"

namespace strata::train {

struct ModelConfig {
  int64_t layers = 4;
  int64_t hidden = 128;
  int64_t heads = 4;
  int64_t ffn = 512;      // feed-forward width
  int64_t vocab = 256;    // >= 256 for the byte tokeniser
  int64_t context = 128;  // longest sequence the position embedding covers
  double dropout = 0.0;
  // LM head reuses the token embedding. Its default is the architecture's:
  // true for strata and gpt2, false for llama (defaultTiedEmbeddings); a
  // file or flags that name an architecture without tied_embeddings get it.
  bool tiedEmbeddings = true;
  // "strata" (exact GELU) or "gpt2": GPT-2's architecture (tanh-approximated
  // GELU, tied head; learned positions, LayerNorm eps 1e-5 and biases as
  // both have), so its weights mean what they mean in GPT-2 implementations
  // and `strata export` can write them in the Hugging Face layout. Or
  // "llama": the Llama family (RMSNorm, rotary positions, grouped-query
  // attention, SwiGLU MLP of width ffn, no biases, no dropout).
  std::string architecture = "strata";
  // llama: key/value heads of grouped-query attention, dividing heads; 0
  // means as many as heads (multi-head attention), 1 multi-query.
  int64_t kvHeads = 0;
  double ropeTheta = 10000.0;  // llama: the rotary base (Llama 3: 500000)
  double rmsNormEps = 1e-5;    // llama: RMSNorm's epsilon
  // llama: the rotary frequencies' scaling for long contexts, the
  // [model.rope_scaling] table (tensor_parallel/rope_scaling.h).
  tensor_parallel::RopeScaling ropeScaling;
  // Mixture-of-experts MLPs, the [model.moe] table
  // (expert_parallel/moe_options.h); experts = 0 keeps every block dense.
  expert_parallel::MoeOptions moe;
};

constexpr const char* kGpt2Architecture = "gpt2";
constexpr const char* kLlamaArchitecture = "llama";

// model.tied_embeddings when the architecture is named without it.
bool defaultTiedEmbeddings(const std::string& architecture);

struct ParallelConfig;
// "pp 2 x dp 2 x tp 2", with "x cp N" after dp when cp is above 1 (as
// ParallelLayout::describe writes it).
std::string layoutText(const ParallelConfig& parallel);

struct ParallelConfig {
  int64_t pp = 1;
  int64_t dp = 1;
  // Context parallel: every sequence split over cp ranks in load-balanced
  // chunks (context_parallel/sequence_layout.h); the cp ranks hold the same
  // parameters and average their gradients with dp.
  int64_t cp = 1;
  int64_t tp = 1;
  // Expert parallel: the experts of every MoE MLP spread over ep ranks
  // carved out of dp x cp (ep divides dp x cp and model.moe.experts);
  // tokens travel to their experts by all-to-all.
  int64_t ep = 1;
  // How attention sees the whole sequence under cp: "ring" (keys and values
  // passed around the group) or "all-to-all" (Ulysses: heads traded for
  // tokens; cp must divide each tp rank's heads and kv heads).
  std::string cpAlgorithm = "ring";
  std::string schedule = "1f1b";
  int64_t virtualStages = 1;  // model chunks per pipeline rank (interleaved-1f1b)
  // How the trainer cuts the model's layers (the embedding, each block, the
  // head) into pp x virtualStages stages: "even" (layer counts as even as
  // possible) or "balanced" (every layer, the head with the loss it feeds,
  // timed on a sample micro-batch on every rank, and the cut balanced by the
  // averaged times; pipeline/profiler.h).
  std::string partition = "even";
  // An explicit cut, one layer count per stage; when given it is the cut,
  // whatever `partition` says. A checkpoint's config records the cut its run
  // trained with here.
  std::vector<int64_t> stageLayers;
  // ZeRO stage over dp: 0 off, 1 shards the AdamW state, 2 the averaged
  // gradients too (each replica keeps only the chunks it updates), 3 the
  // parameters too (each layer gathered while it runs, fully_sharded.h).
  int64_t zero = 0;
  // ZeRO-3: release each layer after its forward and gather it again for
  // backward (less memory); off keeps a stage's layers gathered across the
  // micro-batches of a step (less communication; torchtitan's choice under
  // a pipeline).
  bool reshardAfterForward = true;
  // Sequence parallel: LayerNorms, dropout and residuals run on seq_len / tp
  // rows per tp rank (needs seq_len divisible by tp).
  bool sequenceParallel = false;
  // Each stage keeps only its inputs; backward recomputes the forward, with
  // the dropout masks the first forward drew.
  bool checkpointActivations = false;
  // How the layout follows a world of another size (elastic restarts):
  // "off" or "dp" (strata/config/elastic_layout.h).
  std::string elastic = "off";
};

struct OptimConfig {
  int64_t steps = 300;
  int64_t globalBatch = 16;  // sequences per optimizer step, over all replicas
  int64_t microBatch = 4;    // sequences per pipeline micro-batch
  int64_t seqLen = 128;
  double lr = 1e-3;     // peak, reached after warmup
  double minLr = 1e-4;  // floor of the cosine decay
  int64_t warmupSteps = 30;
  double weightDecay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double gradClip = 1.0;  // max global gradient norm; 0 turns clipping off
  // After this many steps in a row skipped for a non-finite loss or gradient
  // norm, roll back to the latest checkpoint and go on past the data that
  // caused them; 0 only skips.
  int64_t maxSkippedSteps = 0;
  // Log a step whose loss is this many standard deviations above the last
  // 50 steps' mean (loss_spike.h); 0 turns it off.
  double spikeZscore = 6;
  // At a loss spike, also roll back to the latest checkpoint and go on past
  // the data that caused it (at most once per checkpoint: a second spike
  // before a newer checkpoint is only logged).
  bool spikeRollback = false;
  int64_t seed = 1234;
  std::string precision = "fp32";  // "fp32" or "bf16" (autocast)
  // "cpu", or "cuda": each rank trains on GPU LOCAL_RANK of its node.
  std::string device = "cpu";
  int64_t threads = 1;  // intra-op threads per worker
  int64_t logEvery = 10;
  // Every this many steps the ranks compare their compute time (forward and
  // backward, without waits); a rank above stragglerFactor x the median is
  // named in the log, metrics.jsonl and the report. 0 turns it off.
  int64_t stragglerEvery = 50;
  double stragglerFactor = 1.5;
  int64_t evalEvery = 100;  // 0: only at the end
  int64_t evalBatches = 4;
  std::string outDir = "runs/gpt";  // metrics, loss curve, timeline
};

struct DataConfig {
  // UTF-8 files, read in this order; empty: the generated corpus. A TOML
  // array (`files = ["a.txt", "b.txt"]`); the flag takes them comma-separated.
  std::vector<std::string> files;
  // PREFIX of a dataset made by `strata data prepare` (PREFIX.bin and
  // PREFIX.idx), read through a memory map; excludes `files`. Empty: none.
  std::string prepared;
  // makeTokenizer()'s spec (strata/data/tokenizer.h): "byte", a
  // directory of GPT-2 BPE files, a SentencePiece .model file, or a Hugging
  // Face tokenizer.json (a file, or a directory holding one).
  std::string tokenizer = "byte";
  int64_t corpusBytes = 1000000;
  int64_t corpusSeed = 7;
  double validationFraction = 0.05;
  bool shuffle = true;
  // Which targets count in the loss: "all", "assistant" (only the tokens a
  // conversation's assistant wrote: a dataset prepared with `strata data
  // prepare --chat`, whose PREFIX.mask says which), or "auto": assistant
  // when the prepared dataset has a mask, else all. The loss is the mean
  // over the counted targets of the whole global batch.
  std::string lossOn = "auto";
  // Pack documents (data.prepared's, conversations among them) into the
  // training windows without letting them see each other: attention stops
  // at each document's start, positions restart there, and the target that
  // crosses into the next document is not counted.
  bool pack = false;
  // Packed, a document that does not fit in the rest of a window continues
  // in the next (as a document of its own there) instead of starting the
  // next window, the rest of this one padded. Off, a conversation is never
  // cut unless it is longer than a window.
  bool splitAcrossWindows = false;
};

struct CheckpointConfig {
  std::string dir;      // empty: no checkpoints
  int64_t every = 0;    // steps between saves; 0: only at the end
  bool resume = false;  // continue from the latest complete checkpoint in dir
  int64_t keep = 0;     // complete checkpoints kept, the newest; 0: all
  // A save that fails (a full disk): "stop" the run, or "continue" with a
  // warning. Either way the earlier checkpoints stay intact.
  std::string onSaveError = "stop";
  // Write checkpoints on a background thread while training goes on
  // (async_checkpoint.h); a save completes at a later step.
  bool async = false;
  // Hugging Face weights (`strata export`'s, or a GPT-2 or Llama-family
  // model's: a .safetensors file, a sharded model's index, or a directory
  // holding either) to start from instead of the seeded weights; a resumed
  // checkpoint wins over it.
  std::string initFrom;
};

// Fine-tuning: every weight trained ("full"), or LoRA adapters on a frozen
// base ("lora": tensor_parallel/lora.h), the adapters float32 and the only
// weights with gradients and optimizer state.
struct FinetuneConfig {
  std::string method = "full";  // "full" or "lora"
  int64_t rank = 8;             // r
  double alpha = 16.0;          // the update is scaled by alpha / r
  double dropout = 0.0;         // on the adapters' input
  // The projections that carry adapters: q, k, v, o (attention), gate, up,
  // down (the dense SwiGLU MLP).
  std::vector<std::string> targets = {"q", "v"};
  // A PEFT adapter folder (adapter_model.safetensors, adapter_config.json)
  // to start the adapters from instead of B = 0; empty: none. A resumed
  // checkpoint wins, as over checkpoint.init_from.
  std::string initAdapter;
  // The dtype the frozen base's projection weights (q .. down, the experts'
  // too) are kept in: "fp32", or "bf16" under train.precision = "bf16",
  // whose autocast computes them in bf16 anyway: half their memory. The
  // embedding, norms, router and head stay fp32.
  std::string baseDtype = "fp32";

  bool lora() const { return method == "lora"; }
};

struct TrainConfig {
  ModelConfig model;
  ParallelConfig parallel;
  OptimConfig train;
  DataConfig data;
  CheckpointConfig checkpoint;
  FinetuneConfig finetune;

  // global batch / (micro-batch x dp): micro-batches per step per replica.
  int64_t microBatches() const;
};

// The pipeline rank that runs each stage: pp x virtual_stages stages
// round-robin, or for the V schedules (zb-v, dualpipe-v) 2 x pp stages with
// rank r running stages r and 2pp-1-r. Its size is the number of stages.
// Throws schedule::ScheduleError for an unknown schedule (validate_config.h
// reports that first).
std::vector<int> pipelineStageRanks(const ParallelConfig& parallel);

// One option: its place in the file, its flag, and where it lives.
struct ConfigOption {
  const char* table;  // "model", "parallel", "train", "data", "checkpoint", "finetune"
  const char* key;    // TOML key, e.g. "global_batch"
  const char* flag;   // command-line flag without "--", e.g. "global-batch"
  const char* help;
  std::variant<int64_t& (*)(TrainConfig&), double& (*)(TrainConfig&), bool& (*)(TrainConfig&),
               std::string& (*)(TrainConfig&), std::vector<std::string>& (*)(TrainConfig&),
               std::vector<int64_t>& (*)(TrainConfig&)>
      field;
};

const std::vector<ConfigOption>& configOptions();

}  // namespace strata::train

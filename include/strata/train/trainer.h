// The trainer: one object that trains a model of any family (GPT, Llama)
// over any pp x dp x tp layout.
//
//   auto world = strata::World::init();
//   strata::train::Trainer trainer(config, world);   // validates, then builds
//   for (int i = 0; i < config.train.steps; ++i) trainer.step();
//
// Per step: every data-parallel replica reads its part of the global batch;
// the pipeline runs forward and backward over the micro-batches of its
// schedule (tensor-parallel layers inside each stage); a tied embedding's
// two copies (first and last stage) sum their gradients; gradients are
// averaged over dp; the global norm over every group is clipped; AdamW (or
// ZeRO-1 sharded AdamW) steps with the warmup-cosine learning rate.
//
// The constructor first checks the config against the world size
// (validate_config.h), throwing ConfigError on every rank alike before any
// communication; then it creates the process groups (collective). step()
// and evaluate() are collectives over the whole job; every wait in them is
// bounded by the communicators' timeout (TimeoutError, PeerError).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/checkpoint/checkpoint.h"
#include "strata/config/config.h"
#include "strata/config/model_spec.h"
#include "strata/data/batch_reader.h"
#include "strata/models/model_family.h"
#include "strata/runtime/world.h"
#include "strata/train/lr_schedule.h"

namespace strata::data_parallel {
struct NamedTensor;
}  // namespace strata::data_parallel

namespace strata::pipeline {
class Pipeline;
struct TraceEvent;
}  // namespace strata::pipeline

namespace strata::train {

class AsyncCheckpoint;
struct DataSplit;

// One parameter as this rank holds it: its name in the one-process model,
// this rank's tensor (live, not a copy), and the dimension tensor
// parallelism splits it along (tensor_parallel::kReplicated when every tp
// rank holds all of it). A vocabulary tp does not divide is padded with rows
// up to the next multiple of tp before the split (models/gpt.h).
struct ParameterShard {
  std::string name;
  at::Tensor tensor;
  int64_t shardDim = 0;
};

// A step's mixture-of-experts routing (models with model.moe), the same on
// every rank: the assignments each expert of each MoE layer received over
// the whole step (all replicas and micro-batches) as min / mean / max over
// (layer, expert), the assignments dropped at capacity, and the routing
// losses averaged over layers, micro-batches and replicas (unscaled by their
// coefficients).
struct MoeReport {
  bool present = false;
  double tokensMin = 0;
  double tokensMean = 0;
  double tokensMax = 0;
  int64_t dropped = 0;
  double auxLoss = 0;
  double zLoss = 0;
  // This rank's wall time in the ep all-to-alls of dispatch and combine
  // (forward and backward); 0 at ep 1.
  double exchangeSeconds = 0;
};

struct StepReport {
  int64_t step = 0;     // steps completed, this one included
  double loss = 0;      // mean over the global batch, known on every rank
  double lr = 0;        // the rate this step used
  double gradNorm = 0;  // global, before clipping
  double seconds = 0;   // wall time of the step
  double bubble = 0;    // this rank's measured pipeline idle share
  // This rank's forward and backward work in the step, without the waits for
  // its pipeline peers (the trace's compute events).
  double computeSeconds = 0;
  // The loss or the gradient norm was not finite, on every rank alike (both
  // are agreed across the job), so the optimizer did not step: parameters and
  // optimizer state are unchanged; the step and its data still count.
  bool skipped = false;
  MoeReport moe;
};

class Trainer {
 public:
  Trainer(TrainConfig config, std::shared_ptr<World> world);
  ~Trainer();

  StepReport step();
  // Mean validation loss over `batches` global batches of the validation
  // split, the same on every rank: forward only, gradients untouched.
  double evaluate(int64_t batches);

  // Writes a checkpoint of the current step (collective).
  void saveCheckpoint();
  // Starts an asynchronous checkpoint of the current step with `saver`, which
  // must have no save in flight (collective; async_checkpoint.h).
  void startCheckpoint(AsyncCheckpoint& saver);
  // Restores the latest complete checkpoint under config.checkpoint.dir and
  // returns what its metadata says; nullopt when there is none.
  std::optional<CheckpointInfo> resumeFromLatest();
  // Replaces this rank's parameters with their slices of a GPT-2 safetensors
  // file (gpt2_import.h); the optimizer starts fresh. Not collective: every
  // rank reads the same file and checks all of it alike. Throws
  // SafetensorsError for a file that does not fit the model.
  void initFrom(const std::string& safetensorsPath);
  // LoRA: this rank's adapter shards from a PEFT adapter folder
  // (peft_adapter.h), which must have the run's rank, alpha and targets
  // (ConfigError naming the difference); the optimizer starts fresh. Not
  // collective, like initFrom; SafetensorsError for files that do not fit.
  void initAdapter(const std::string& dir);
  // After steps that went wrong (non-finite values, a loss spike): the
  // model, optimizer and step count of the latest complete checkpoint, with
  // the training data left where it is, so that training goes on past the
  // batches that caused them. Collective, as resumeFromLatest; throws Error
  // when config.checkpoint.dir holds no complete checkpoint, saying that
  // training `happened` ("produced a loss spike at step 63").
  CheckpointInfo rollBackPastBadData(const std::string& happened);

  int64_t stepsDone() const { return lr_.state().step; }
  const TrainConfig& config() const { return config_; }
  const ParallelLayout& layout() const;
  const ParallelGroups& groups() const;
  World& world() const { return *world_; }
  // Model parameters of the whole (unsharded) model.
  int64_t parameterCount() const;
  // Whether the loss counts only the targets of the data's loss mask
  // (data.loss_on, strata/config/config.h).
  bool lossMasked() const;
  // How the training documents lie in the windows (meaningful with data.pack).
  const PackingStats& packing() const;
  // The parameters of this rank's stages, each once (a tied weight under the
  // embedding's name), in model order. Under ZeRO-3 (whose parameters hold
  // memory only while their layer runs) gathered copies: a collective over dp.
  std::vector<ParameterShard> parameterShards() const;
  // This step's pipeline trace events of every pp rank (collective over pp;
  // the result is complete on pp rank 0).
  std::vector<pipeline::TraceEvent> gatherLastTrace() const;
  const pipeline::Pipeline& pipeline() const;

 public:
  struct State;  // public so the trainer's helpers can take it

 private:
  // The constructor's steps, in order.
  void joinReplicas();
  void joinExperts();
  void buildModel();
  std::vector<data_parallel::NamedTensor> collectOwnParameters();
  void linkTiedWeight();
  void buildOptimizer(const std::vector<data_parallel::NamedTensor>& named);
  void buildReplicaSets(const std::vector<data_parallel::NamedTensor>& named, int stage);
  void openData(const DataSplit& data);

  double runBatch(const Batch& batch);
  void syncGradients();
  void optimizerStep(double gradScale);
  void zeroGradients();
  // What a checkpoint of this rank holds: model, optimizer (or ZeRO shards),
  // LR step and data position.
  RankState rankState() const;

  TrainConfig config_;
  std::shared_ptr<World> world_;
  std::unique_ptr<State> state_;
  WarmupCosineLr lr_;
};

}  // namespace strata::train

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/parameter_index.h"
#include "checkpoint/same_model.h"
#include "strata/checkpoint/async_checkpoint.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/checkpoint/hugging_face_import.h"
#include "strata/checkpoint/peft_adapter.h"
#include "strata/config/config_file.h"
#include "strata/error.h"
#include "strata/train/trainer.h"
#include "train/trainer_state.h"

// The Trainer's checkpoints: what a rank saves, saving it (in the foreground
// or as a background snapshot), resuming, importing GPT-2 weights, and
// rolling back past bad data.
namespace strata::train {
namespace {

// ZeRO-3: every layer gathered for the object's lifetime (no-op without
// ZeRO-3). commit() takes parameters overwritten meanwhile into the shards;
// otherwise they are released unchanged, also when a load throws.
class GatheredWhole {
 public:
  explicit GatheredWhole(FullyShardedTraining* training) : training_(training) {
    if (training_) training_->gatherAll();
  }
  ~GatheredWhole() {
    if (training_) training_->reshard();
  }
  GatheredWhole(const GatheredWhole&) = delete;
  GatheredWhole& operator=(const GatheredWhole&) = delete;
  void commit() {
    if (training_) training_->commitParameters();
  }

 private:
  FullyShardedTraining* training_;
};

}  // namespace

RankState Trainer::rankState() const {
  const State& s = *state_;
  RankState rank;
  rank.model = s.model.ptr().get();
  rank.heldLayers = s.heldLayers;
  rank.optimizer = s.optimizer.get();
  for (const auto& zero : s.zero) rank.shardedOptimizers.push_back(zero.get());
  if (s.fullySharded) {
    for (const auto& optimizer : s.fullySharded->optimizers())
      rank.shardedOptimizers.push_back(optimizer.get());
    rank.fullySharded = true;
  }
  rank.lr = lr_.state();
  rank.data = s.trainData->position();
  std::vector<std::pair<std::string, at::Tensor>> owned;
  for (const ParameterShard& shard : s.shards) owned.emplace_back(shard.name, shard.tensor);
  rank.parameters = indexParameters(*s.model, owned, s.groups.coord, s.layout.degree(Dim::kTensor));
  rank.tpRank = s.groups.coord.tp;
  rank.dpRank = s.replicas->rank();  // among the replicas of these parameters: dp x cp
  rank.expertDpRank = s.expertReplicas ? s.expertReplicas->rank() : rank.dpRank;
  return rank;
}

void Trainer::saveCheckpoint() {
  State& s = *state_;
  // ZeRO-3: the parameters are written whole, so every layer is gathered
  // while the checkpoint is saved, and released after.
  GatheredWhole gathered(s.fullySharded.get());
  RankState rank = rankState();
  train::saveCheckpoint(config_.checkpoint.dir, stepsDone(), s.layout, configToToml(config_), rank,
                        world_->comm());
}

void Trainer::startCheckpoint(AsyncCheckpoint& saver) {
  State& s = *state_;
  // ZeRO-3: gathered while the snapshot copies them, released after.
  GatheredWhole gathered(s.fullySharded.get());
  RankState rank = rankState();
  saver.start(config_.checkpoint.dir, stepsDone(), s.layout, configToToml(config_), rank,
              world_->comm());
}

std::optional<CheckpointInfo> Trainer::resumeFromLatest() {
  State& s = *state_;
  std::optional<std::string> latest = findLatestComplete(config_.checkpoint.dir);
  if (!latest) return std::nullopt;
  CheckpointInfo saved = readCheckpointInfo(*latest);
  checkSameModel(config_, saved, *latest);
  bool sameHoldings =
      sameHoldingsPerRank(config_, saved, *latest, static_cast<int>(s.model->size()));
  GatheredWhole gathered(s.fullySharded.get());
  RankState rank = rankState();
  CheckpointInfo info = loadCheckpoint(*latest, s.layout, world_->rank(), rank, sameHoldings);
  gathered.commit();
  lr_.restore(rank.lr);
  s.trainData->seek(rank.data);
  return info;
}

void Trainer::initFrom(const std::string& path) {
  const models::ModelSpec& spec = state_->spec;
  loadHuggingFaceWeights(path, rankState(),
                         *models::modelFamily(spec.architecture).huggingFace(spec));
}

void Trainer::initAdapter(const std::string& dir) {
  const models::ModelSpec& spec = state_->spec;
  // Rank, alpha and targets the run's, or ConfigError.
  PeftAdapterConfig adapter = readAdapterConfig(dir, spec.lora);
  loadHuggingFaceWeights((std::filesystem::path(dir) / kPeftWeightsFile).string(), rankState(),
                         *peftAdapterLayout(spec, adapter.gateUpRank), WeightsOf::kAdapters);
}

CheckpointInfo Trainer::rollBackPastBadData(const std::string& happened) {
  State& s = *state_;
  DataPosition here = s.trainData->position();
  std::optional<CheckpointInfo> info = resumeFromLatest();
  if (!info) {
    throw Error("training " + happened + " and there is no checkpoint to roll back to in '" +
                config_.checkpoint.dir + "' (set --checkpoint-dir and --checkpoint-every)");
  }
  s.trainData->seek(here);
  return *info;
}

}  // namespace strata::train

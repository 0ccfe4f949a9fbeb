#include "strata/train/loop/checkpoint_convert.h"

#include <torch/torch.h>

#include <cstdio>
#include <filesystem>

#include "strata/models/model_family.h"
#include "strata/train/checkpoint/checkpoint.h"
#include "strata/train/config/config_file.h"
#include "strata/train/config/validate_config.h"
#include "strata/train/loop/optimizer.h"
#include "strata/train/loop/trainer.h"
#include "train/checkpoint/indexed_checkpoint.h"
#include "train/loop/held_layers.h"
#include "train/loop/parameter_index.h"
#include "train/loop/shape_communicator.h"

namespace strata::train {
namespace {

// Which of the model's top-level layers pipeline rank `ppRank` trains: the
// builder makes the other blocks as shapes only and empties them at once, so
// a rank of the new layout never holds, or draws initial values for, more
// than its stages (the embedding and the head excepted, model_family.h).
std::vector<bool> layersHeldBy(const TrainConfig& config, int64_t blocks, int ppRank) {
  std::vector<bool> held;
  for (int owner : layerOwners(config, static_cast<int>(blocks + 2)))
    held.push_back(owner == ppRank);
  return held;
}

// "shard 3 of 8: rank-00002.pt (12.4 MB)", with what it copies if it does.
std::string describeShard(int done, int world, const ShardRecord& record,
                          const std::string& copyOf = "") {
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(record.bytes) / 1e6);
  return "shard " + std::to_string(done) + " of " + std::to_string(world) + ": " + record.file +
         " (" + size + (copyOf.empty() ? "" : ", a copy of " + copyOf) + ")";
}

}  // namespace

std::string convertCheckpoint(const ConvertOptions& o) {
  IndexedCheckpoint opened = openIndexedCheckpoint(o.from);
  const std::string& source = opened.directory;
  const CheckpointInfo& info = opened.info;
  TrainConfig config = opened.config;
  config.parallel.pp = o.pp;
  config.parallel.dp = o.dp;
  config.parallel.tp = o.tp;
  // Built with every expert on every rank and no context split: a run with
  // ep or cp above 1 loads the result through the index.
  config.parallel.cp = 1;
  config.parallel.ep = 1;
  config.parallel.virtualStages = o.virtualStages;
  config.parallel.zero = 0;             // plain AdamW state: any --zero loads it
  config.parallel.stageLayers.clear();  // the new layout's cut is the even one
  if (!o.schedule.empty()) config.parallel.schedule = o.schedule;
  config.train.globalBatch = o.globalBatch.value_or(config.train.globalBatch);
  config.train.microBatch = o.microBatch.value_or(config.train.microBatch);
  int world = static_cast<int>(o.pp * o.dp * o.tp);
  try {
    validateConfig(config, world);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(e.what()) +
                      "\n  (the new layout is checked with the source run's schedule and batch "
                      "unless --schedule / --global-batch / --micro-batch give others)");
  }
  ParallelLayout layout(
      world, {static_cast<int>(o.pp), static_cast<int>(o.dp), 1, static_cast<int>(o.tp)});
  std::string target = stepDirectory(o.to, info.step);
  std::error_code error;
  std::filesystem::create_directories(target, error);
  if (!std::filesystem::is_directory(target))
    throw CheckpointError("cannot create '" + target + "': " + error.message());

  models::ModelSpec spec = modelSpecOf(config);
  const models::ModelFamily& family = models::modelFamily(spec.architecture);
  CheckpointInfo written{info.step, world, layout.degrees(), configToToml(config), {}};
  written.shards.resize(static_cast<size_t>(world));
  std::vector<std::vector<TensorPiece>> pieces(static_cast<size_t>(world));
  int done = 0;
  for (int pp = 0; pp < o.pp; ++pp) {
    for (int tp = 0; tp < o.tp; ++tp) {
      Coord coord{pp, 0, 0, tp};
      torch::nn::Sequential model =
          family.build(spec, std::make_shared<ShapeCommunicator>(tp, static_cast<int>(o.tp)),
                       nullptr, nullptr, layersHeldBy(config, spec.layers, pp));
      auto owned = stageParameters(model, config, pp);
      std::vector<at::Tensor> tensors;
      for (const auto& item : owned) tensors.push_back(item.second);
      std::unique_ptr<torch::optim::AdamW> optimizer = makeAdamW(tensors, config.train);
      RankState state{model.ptr().get(), optimizer.get(), {}, {}};
      // As the trainer's rank holds them, so its shard saves what the trainer's would.
      state.heldLayers = releaseOtherLayers(model, tensors);
      state.parameters = indexParameters(*model, owned, coord, static_cast<int>(o.tp));
      state.tpRank = tp;
      loadResharded(source, info, state);
      // The data-parallel replicas' shards are the same to the byte (the
      // archive holds nothing of dpRank, which decides only what is indexed):
      // the first is written, the others copied from it.
      const ShardRecord* first = nullptr;
      for (int dp = 0; dp < o.dp; ++dp) {
        int rank = layout.rankOf(Coord{pp, dp, 0, tp});
        ShardRecord& record = written.shards[static_cast<size_t>(rank)];
        record = first ? copyShard(target, *first, rank) : writeShard(target, rank, state);
        state.dpRank = dp;
        pieces[static_cast<size_t>(rank)] = indexShard(state, record.file);
        if (o.progress) o.progress(describeShard(++done, world, record, first ? first->file : ""));
        if (!first) first = &record;
      }
    }
  }
  for (auto& rankPieces : pieces)
    written.pieces.insert(written.pieces.end(), rankPieces.begin(), rankPieces.end());
  writeMetadataAndMarker(target, written);
  return target;
}

}  // namespace strata::train

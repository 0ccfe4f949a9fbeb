#include "strata/checkpoint/checkpoint_convert.h"

#include <torch/torch.h>

#include <cstdio>
#include <filesystem>

#include "checkpoint/indexed_checkpoint.h"
#include "checkpoint/layout_rank.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/config/config_file.h"
#include "strata/config/validate_config.h"

namespace strata::train {
namespace {

// "shard 3 of 8: rank-00002.pt (12.4 MB)", with what it copies if it does.
std::string describeShard(int done, int world, const ShardRecord& record,
                          const std::string& copyOf = "") {
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(record.bytes) / 1e6);
  return "shard " + std::to_string(done) + " of " + std::to_string(world) + ": " + record.file +
         " (" + size + (copyOf.empty() ? "" : ", a copy of " + copyOf) + ")";
}

// The source run's configuration at the new layout, validated as `strata
// train` would validate it.
TrainConfig convertedConfig(TrainConfig config, const ConvertOptions& o) {
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
  try {
    validateConfig(config, static_cast<int>(o.pp * o.dp * o.tp));
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(e.what()) +
                      "\n  (the new layout is checked with the source run's schedule and batch "
                      "unless --schedule / --global-batch / --micro-batch give others)");
  }
  return config;
}

// One conversion: what it reads, the layout it writes, and what it has
// written so far (by global rank).
struct Conversion {
  const ConvertOptions& options;
  const IndexedCheckpoint& source;
  TrainConfig config;
  ParallelLayout layout;
  std::string target;  // the step directory written
  std::vector<ShardRecord> shards;
  std::vector<std::vector<TensorPiece>> pieces;
  int done = 0;
};

// Pipeline rank `pp` at tp rank `tp`, rebuilt as the trainer builds it,
// filled from the source and written for each of its dp replicas: the
// replicas' shards are the same to the byte (the archive holds nothing of
// dpRank, which decides only what is indexed), so the first is written and
// the others copied from it.
void convertRank(Conversion& c, int pp, int tp) {
  const ConvertOptions& o = c.options;
  LayoutRank built = buildLayoutRank(c.config, pp, tp);
  RankState& state = built.state;
  loadResharded(c.source.directory, c.source.info, state);
  const ShardRecord* first = nullptr;
  for (int dp = 0; dp < o.dp; ++dp) {
    int rank = c.layout.rankOf(Coord{pp, dp, 0, tp});
    ShardRecord& record = c.shards[static_cast<size_t>(rank)];
    record = first ? copyShard(c.target, *first, rank) : writeShard(c.target, rank, state);
    state.dpRank = dp;
    c.pieces[static_cast<size_t>(rank)] = indexShard(state, record.file);
    if (o.progress)
      o.progress(describeShard(++c.done, c.layout.worldSize(), record, first ? first->file : ""));
    if (!first) first = &record;
  }
}

// The step directory to write: never the source's own (its shards are read
// while the new ones are written), nor one that already holds a complete
// checkpoint, which the conversion would overwrite.
std::string targetDirectory(const ConvertOptions& o, const IndexedCheckpoint& source) {
  std::string target = stepDirectory(o.to, source.info.step);
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::weakly_canonical(target, error) == fs::weakly_canonical(source.directory, error))
    throw ConfigError("--to '" + o.to + "' would write step " + std::to_string(source.info.step) +
                      " over the checkpoint it reads ('" + source.directory +
                      "'): convert into another folder");
  if (fs::exists(fs::path(target) / "COMPLETE", error))
    throw ConfigError("'" + target +
                      "' already holds a complete checkpoint: remove it or convert into another "
                      "folder");
  fs::create_directories(target, error);
  if (!fs::is_directory(target))
    throw CheckpointError("cannot create '" + target + "': " + error.message());
  return target;
}

}  // namespace

std::string convertCheckpoint(const ConvertOptions& o) {
  IndexedCheckpoint source = openIndexedCheckpoint(o.from);
  int world = static_cast<int>(o.pp * o.dp * o.tp);
  Conversion c{o,
               source,
               convertedConfig(source.config, o),
               ParallelLayout(world, {static_cast<int>(o.pp), static_cast<int>(o.dp), 1,
                                      static_cast<int>(o.tp)}),
               targetDirectory(o, source),
               std::vector<ShardRecord>(static_cast<size_t>(world)),
               std::vector<std::vector<TensorPiece>>(static_cast<size_t>(world))};
  for (int pp = 0; pp < o.pp; ++pp) {
    for (int tp = 0; tp < o.tp; ++tp) convertRank(c, pp, tp);
  }
  CheckpointInfo written{source.info.step, world, c.layout.degrees(), configToToml(c.config),
                         std::move(c.shards)};
  for (auto& rankPieces : c.pieces)
    written.pieces.insert(written.pieces.end(), rankPieces.begin(), rankPieces.end());
  writeMetadataAndMarker(c.target, written);
  return c.target;
}

}  // namespace strata::train

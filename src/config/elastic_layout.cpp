#include "strata/config/elastic_layout.h"

#include "strata/error.h"

namespace strata::train {

FittedLayout fitLayoutToWorld(const TrainConfig& config, int worldSize) {
  const ParallelConfig& p = config.parallel;
  FittedLayout fitted{config, ""};
  int64_t configured = p.pp * p.dp * p.cp * p.tp;
  if (p.elastic == "off" || configured == worldSize || p.pp < 1 || p.cp < 1 || p.tp < 1)
    return fitted;
  if (p.elastic != "dp") {
    throw ConfigError("parallel.elastic must be off or dp, got '" + p.elastic + "'");
  }
  int64_t modelRanks = p.pp * p.cp * p.tp;
  int64_t micro = config.train.microBatch;
  std::string why = "the job has " + std::to_string(worldSize) + " ranks, the configuration " +
                    layoutText(p) + " needs " + std::to_string(configured);
  if (worldSize % modelRanks != 0) {
    throw ConfigError(why + ", and elastic policy dp cannot fit it: " + std::to_string(worldSize) +
                      " ranks are not a multiple of pp x cp x tp = " + std::to_string(modelRanks));
  }
  int64_t dp = worldSize / modelRanks;
  if (micro < 1 || config.train.globalBatch % (micro * dp) != 0) {
    throw ConfigError(why + ", and elastic policy dp cannot fit it: global batch " +
                      std::to_string(config.train.globalBatch) +
                      " is not a multiple of micro_batch " + std::to_string(micro) + " x dp " +
                      std::to_string(dp));
  }
  fitted.config.parallel.dp = dp;
  fitted.note = "elastic: " + why + "; running " + layoutText(fitted.config.parallel) +
                " (policy dp), the global batch of " + std::to_string(config.train.globalBatch) +
                " kept as " + std::to_string(config.train.globalBatch / (micro * dp)) +
                " micro-batches of " + std::to_string(micro) + " per replica";
  return fitted;
}

}  // namespace strata::train

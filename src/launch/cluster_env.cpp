#include "cluster_env.h"

#include "strata/error.h"
#include "strata/util/endpoint.h"
#include "strata/util/parse_number.h"

namespace strata {
namespace {

std::optional<std::string> setValue(const EnvironmentLookup& lookup, const std::string& name) {
  std::optional<std::string> value = lookup(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::optional<int64_t> integer(const EnvironmentLookup& lookup, const std::string& name,
                               int64_t min, int64_t max) {
  std::optional<std::string> text = setValue(lookup, name);
  if (!text) return std::nullopt;
  std::optional<int64_t> value = parseInteger(*text);
  if (!value || *value < min || *value > max) {
    throw ConfigError(name + " must be an integer in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "], got '" + *text + "'");
  }
  return value;
}

// PET_NNODES is "N", or torchrun's elastic "MIN:MAX".
std::optional<std::pair<int64_t, int64_t>> nodeCounts(const EnvironmentLookup& lookup) {
  std::optional<std::string> text = setValue(lookup, "PET_NNODES");
  if (!text) return std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> range = parseNodeRange(*text);
  if (!range) {
    throw ConfigError(
        "PET_NNODES must be a node count N or a range MIN:MAX with 1 <= MIN <= MAX, "
        "got '" +
        *text + "'");
  }
  return range;
}

// PET_NODE_RANK, else the Indexed Job's completion index plus the group's offset.
std::optional<int64_t> nodeRank(const EnvironmentLookup& lookup) {
  constexpr int64_t kMaxNodes = 1 << 20;
  if (std::optional<int64_t> rank = integer(lookup, "PET_NODE_RANK", 0, kMaxNodes)) return rank;
  std::optional<int64_t> index = integer(lookup, "JOB_COMPLETION_INDEX", 0, kMaxNodes);
  std::optional<int64_t> offset = integer(lookup, "STRATA_NODE_RANK_OFFSET", 0, kMaxNodes);
  if (!index) return std::nullopt;
  return *index + offset.value_or(0);
}

}  // namespace

std::optional<std::pair<int64_t, int64_t>> parseNodeRange(const std::string& text) {
  size_t colon = text.find(':');
  std::optional<int64_t> min = parseInteger(text.substr(0, colon));
  std::optional<int64_t> max =
      colon == std::string::npos ? min : parseInteger(text.substr(colon + 1));
  if (!min || !max || *min < 1 || *max < *min) return std::nullopt;
  return std::make_pair(*min, *max);
}

ClusterEnvironment readClusterEnvironment(const EnvironmentLookup& lookup) {
  constexpr int64_t kMaxCount = 1 << 20;
  ClusterEnvironment env;
  env.nprocPerNode = integer(lookup, "PET_NPROC_PER_NODE", 1, kMaxCount);
  if (std::optional<std::pair<int64_t, int64_t>> counts = nodeCounts(lookup)) {
    env.minNodes = counts->first;
    env.nnodes = counts->second;
  }
  env.nodeRank = nodeRank(lookup);
  env.maxRestarts = integer(lookup, "PET_MAX_RESTARTS", 0, kMaxCount);
  env.masterAddr = setValue(lookup, "PET_MASTER_ADDR");
  env.masterPort = integer(lookup, "PET_MASTER_PORT", 1, kMaxPort);
  env.rdzvBackend = setValue(lookup, "PET_RDZV_BACKEND");
  env.rdzvEndpoint = setValue(lookup, "PET_RDZV_ENDPOINT");
  return env;
}

}  // namespace strata

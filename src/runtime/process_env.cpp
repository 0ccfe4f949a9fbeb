#include "strata/runtime/process_env.h"

#include <cstdlib>
#include <sstream>

#include "scheduler_env.h"
#include "strata/error.h"
#include "strata/util/parse_number.h"

namespace strata {
namespace {

int intVariable(const ProcessEnv::Lookup& lookup, const std::string& name, int fallback, int min,
                int max) {
  std::optional<std::string> text = lookup(name);
  if (!text || text->empty()) return fallback;
  std::optional<int64_t> value = parseInteger(*text);
  if (!value || *value < min || *value > max) {
    throw ConfigError(name + " must be an integer in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "], got '" + *text + "'");
  }
  return static_cast<int>(*value);
}

std::vector<int> equalNodes(const ProcessEnv& env) {
  if (env.worldSize % env.localWorldSize != 0) return {};
  return std::vector<int>(env.worldSize / env.localWorldSize, env.localWorldSize);
}

// STRATA_NODE_SIZES: positive counts that add up to WORLD_SIZE, with this
// rank's node as large as LOCAL_WORLD_SIZE says.
std::vector<int> nodeSizesOf(const ProcessEnv::Lookup& lookup, const ProcessEnv& env) {
  std::optional<std::string> text = lookup("STRATA_NODE_SIZES");
  if (!text || text->empty()) return equalNodes(env);
  std::vector<int> sizes;
  std::stringstream parts(*text);
  int sum = 0, nodeOfRank = -1;
  for (std::string part; std::getline(parts, part, ',');) {
    std::optional<int64_t> size = parseInteger(part);
    if (!size || *size < 1 || *size > env.worldSize) {
      throw ConfigError("STRATA_NODE_SIZES must list each node's worker count, like '3,2', got '" +
                        *text + "'");
    }
    if (env.rank >= sum && env.rank < sum + *size) nodeOfRank = static_cast<int>(sizes.size());
    sizes.push_back(static_cast<int>(*size));
    sum += static_cast<int>(*size);
  }
  if (sum != env.worldSize || sizes[nodeOfRank] != env.localWorldSize) {
    throw ConfigError("STRATA_NODE_SIZES '" + *text + "' does not fit WORLD_SIZE " +
                      std::to_string(env.worldSize) + " and LOCAL_WORLD_SIZE " +
                      std::to_string(env.localWorldSize) + " of RANK " + std::to_string(env.rank));
  }
  return sizes;
}

// STRATA_DEBUG_SLOW_RANK=R:S, R a rank of the job and S seconds in [0, 60].
void readSlowRank(const ProcessEnv::Lookup& lookup, ProcessEnv& env) {
  std::optional<std::string> text = lookup("STRATA_DEBUG_SLOW_RANK");
  if (!text) return;
  size_t colon = text->find(':');
  char* end = nullptr;
  long rank = colon == std::string::npos ? -1 : std::strtol(text->c_str(), &end, 10);
  bool rankOk = colon != std::string::npos && end == text->c_str() + colon && rank >= 0 &&
                rank < env.worldSize;
  double seconds = rankOk ? std::strtod(text->c_str() + colon + 1, &end) : -1;
  if (!rankOk || *end != '\0' || end == text->c_str() + colon + 1 || !(seconds >= 0) ||
      seconds > 60) {
    throw ConfigError("STRATA_DEBUG_SLOW_RANK expects RANK:SECONDS with RANK in [0, WORLD_SIZE " +
                      std::to_string(env.worldSize) + ") and SECONDS in [0, 60], got '" + *text +
                      "'");
  }
  env.debugSlowRank = static_cast<int>(rank);
  env.debugSlowSeconds = seconds;
}

}  // namespace

ProcessEnv ProcessEnv::fromLookup(const Lookup& given) {
  constexpr int kMaxInt = 1 << 30;
  Lookup lookup = withSchedulerVariables(given);
  ProcessEnv env;
  env.worldSize = intVariable(lookup, "WORLD_SIZE", 1, 1, kMaxInt);
  env.rank = intVariable(lookup, "RANK", 0, -kMaxInt, kMaxInt);
  if (env.rank < 0 || env.rank >= env.worldSize) {
    throw ConfigError("RANK " + std::to_string(env.rank) + " is outside [0, WORLD_SIZE " +
                      std::to_string(env.worldSize) + ")");
  }
  env.localWorldSize =
      intVariable(lookup, "LOCAL_WORLD_SIZE", env.worldSize == 1 ? 1 : env.worldSize, 1, kMaxInt);
  env.localRank = intVariable(lookup, "LOCAL_RANK", env.rank % env.localWorldSize, 0, kMaxInt);
  if (env.localRank >= env.localWorldSize) {
    throw ConfigError("LOCAL_RANK " + std::to_string(env.localRank) +
                      " is outside [0, LOCAL_WORLD_SIZE " + std::to_string(env.localWorldSize) +
                      ")");
  }
  std::optional<std::string> addr = lookup("MASTER_ADDR");
  if (env.worldSize > 1 && (!addr || addr->empty())) {
    throw ConfigError("WORLD_SIZE is " + std::to_string(env.worldSize) +
                      " but MASTER_ADDR is not set: every rank must know where rank 0's "
                      "rendezvous store listens (run under `strata launch`, or set MASTER_ADDR "
                      "and MASTER_PORT)");
  }
  if (addr && !addr->empty()) env.masterAddr = *addr;
  env.masterPort = intVariable(lookup, "MASTER_PORT", env.masterPort, 1, 65535);
  if (auto token = lookup("STRATA_JOB_TOKEN")) env.jobToken = *token;
  if (auto dir = lookup("STRATA_FLIGHT_DIR")) env.flightDir = *dir;
  readSlowRank(lookup, env);
  int torchrunAttempt = intVariable(lookup, "TORCHELASTIC_RESTART_COUNT", 0, 0, kMaxInt);
  env.restartAttempt = intVariable(lookup, "STRATA_RESTART_ATTEMPT", torchrunAttempt, 0, kMaxInt);
  env.storeHostedByLauncher = intVariable(lookup, "STRATA_LAUNCHER_STORE", 0, 0, 1) == 1;
  env.nodeSizes = nodeSizesOf(lookup, env);
  return env;
}

ProcessEnv ProcessEnv::fromEnvironment() {
  return fromLookup([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  });
}

}  // namespace strata

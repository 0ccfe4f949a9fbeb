// Multi-process benchmarks: the benchmark binary re-executes itself once per rank.
//
// spawnRanksIfParent(n, argv) returns true in the parent after every rank has
// exited 0 (it throws std::runtime_error naming a rank that failed or ran past
// `timeout`); it returns false in a rank, which then reads RANK / WORLD_SIZE
// from its environment like any worker. Each rank gets OMP_NUM_THREADS=1 and
// the extra variables in `env`.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace strata::bench {

bool spawnRanksIfParent(int worldSize, char** argv,
                        const std::map<std::string, std::string>& env = {},
                        std::chrono::seconds timeout = std::chrono::seconds(900));

// Where one rank runs when not on this host's loopback: a command prefix
// (`ip netns exec NODE` for a node of a rehearsal) and variables that replace
// the defaults (MASTER_ADDR, LOCAL_RANK, ...).
struct RankSite {
  std::vector<std::string> prefix;
  std::map<std::string, std::string> env;
};
using RankSites = std::function<RankSite(int rank)>;

// spawnRanksIfParent with each rank placed by `sites`.
bool spawnRanksIfParent(int worldSize, char** argv, const std::map<std::string, std::string>& env,
                        std::chrono::seconds timeout, const RankSites& sites);

// Waits for every process of one job's ranks; when one fails or `timeout`
// passes, kills the others and throws std::runtime_error naming `what`, the
// rank and how it ended.
void waitForRanks(const std::vector<pid_t>& pids, const std::string& what,
                  std::chrono::seconds timeout);

// Prints one result as a JSON line on stdout (the format `make bench`
// collects), written by strata/util/json.h; pass doubles through jsonNumber.
void emitJson(const nlohmann::ordered_json& result);

}  // namespace strata::bench

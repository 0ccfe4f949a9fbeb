#include "bench_ranks.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench_env.h"
#include "strata/util/json.h"
#include "strata/util/subprocess.h"

namespace strata::bench {

bool spawnRanksIfParent(int worldSize, char** argv, const std::map<std::string, std::string>& env,
                        std::chrono::seconds timeout) {
  return spawnRanksIfParent(worldSize, argv, env, timeout, [](int) { return RankSite{}; });
}

bool spawnRanksIfParent(int worldSize, char** argv, const std::map<std::string, std::string>& env,
                        std::chrono::seconds timeout, const RankSites& sites) {
  if (std::getenv("RANK")) return false;
  int port = freeLoopbackPort();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < worldSize; ++rank) {
    RankSite site = sites(rank);
    SpawnSpec spec;
    spec.argv = site.prefix;
    spec.argv.push_back(currentExecutable());
    for (char** a = argv + 1; *a; ++a) spec.argv.push_back(*a);
    spec.setEnv = env;
    spec.setEnv["RANK"] = std::to_string(rank);
    spec.setEnv["WORLD_SIZE"] = std::to_string(worldSize);
    spec.setEnv["LOCAL_RANK"] = std::to_string(rank);
    spec.setEnv["LOCAL_WORLD_SIZE"] = std::to_string(worldSize);
    spec.setEnv["MASTER_ADDR"] = "127.0.0.1";
    spec.setEnv["MASTER_PORT"] = std::to_string(port);
    spec.setEnv["OMP_NUM_THREADS"] = "1";
    for (const auto& [name, value] : site.env) spec.setEnv[name] = value;
    pids.push_back(spawnProcess(spec));
  }
  waitForRanks(pids, "benchmark", timeout);
  return true;
}

void waitForRanks(const std::vector<pid_t>& pids, const std::string& what,
                  std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string failure;
  std::vector<bool> done(pids.size(), false);
  for (size_t left = pids.size(); left > 0;) {
    for (size_t rank = 0; rank < pids.size(); ++rank) {
      if (done[rank]) continue;
      if (auto status = pollExit(pids[rank])) {
        done[rank] = true;
        --left;
        if (!status->success() && failure.empty())
          failure = what + " rank " + std::to_string(rank) + " failed with " + status->describe();
      }
    }
    bool late = std::chrono::steady_clock::now() > deadline;
    if (late && failure.empty())
      failure = what + " ranks ran past " + std::to_string(timeout.count()) + " s";
    if (!failure.empty()) {
      for (size_t rank = 0; rank < pids.size(); ++rank) {
        if (!done[rank]) kill(pids[rank], SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!failure.empty()) throw std::runtime_error(failure);
}

void emitJson(const nlohmann::ordered_json& result) { std::cout << dumpJson(result) << std::endl; }

}  // namespace strata::bench

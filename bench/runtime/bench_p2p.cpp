// Point-to-point latency and bandwidth between 2 local ranks, over the
// shared-memory transport and over Gloo's TCP in the same run (the ranks are
// started twice, the second time with STRATA_SHM=0).
//
// Ping-pong: rank 0 sends a message, rank 1 sends it back; one way is half the
// round trip, the median of several rounds of many round trips each.
// Prints one JSON line per message size and transport:
// {"bench":"p2p","bytes":...,"one_way_us":...,"gbps":...,"transport":"shm"|"gloo"}
// gbps = bytes / one-way time / 1e9.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "strata/runtime/world.h"
#include "strata/util/json.h"

namespace {

using Clock = std::chrono::steady_clock;

// Seconds of one round trip of `message`, averaged over `trips`.
double roundTrip(strata::Communicator& comm, torch::Tensor& message, int trips) {
  int peer = 1 - comm.rank();
  auto start = Clock::now();
  for (int i = 0; i < trips; ++i) {
    if (comm.rank() == 0) {
      comm.send(message, peer, i);
      comm.recv(message, peer, i);
    } else {
      comm.recv(message, peer, i);
      comm.send(message, peer, i);
    }
  }
  return std::chrono::duration<double>(Clock::now() - start).count() / trips;
}

void measure(strata::World& world) {
  strata::Communicator& comm = world.comm();
  const char* transport = std::string(comm.backend()) == "gloo+shm" ? "shm" : "gloo";
  for (int64_t bytes = 4096; bytes <= (int64_t{64} << 20); bytes *= 4) {
    torch::Tensor message = torch::ones({bytes / 4});
    int trips = static_cast<int>(std::clamp<int64_t>((int64_t{256} << 20) / bytes, 4, 2000));
    roundTrip(comm, message, std::max(2, trips / 10));  // warm-up: pages, caches
    std::vector<double> rounds;
    for (int round = 0; round < 5; ++round) rounds.push_back(roundTrip(comm, message, trips));
    double oneWay = strata::bench::median(rounds) / 2;
    if (comm.rank() != 0) continue;
    strata::bench::emitJson({{"bench", "p2p"},
                             {"bytes", bytes},
                             {"one_way_us", strata::jsonNumber(oneWay * 1e6)},
                             {"gbps", strata::jsonNumber(bytes / oneWay / 1e9)},
                             {"transport", transport}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("RANK")) {
    strata::bench::spawnRanksIfParent(2, argv, {{"STRATA_SHM", "0"}});
    strata::bench::spawnRanksIfParent(2, argv);
    return 0;
  }
  auto world = strata::World::init();
  torch::set_num_threads(1);
  measure(*world);
  return 0;
}

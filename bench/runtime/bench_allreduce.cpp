// All-reduce bandwidth on 2 local ranks, against this machine's single-thread
// memcpy bandwidth measured in the same run (the ceiling a loopback all-reduce
// of one thread per rank can approach), for an ordinary tensor and for one in
// a collective buffer (reduced in place, no staging copies).
//
// Prints one JSON line per message size and buffer kind:
// {"bench":"allreduce","ranks":2,"bytes":...,"buffer":"ordinary"|"collective",
//  "algbw_gbps":...,"busbw_gbps":...,"memcpy_gbps":...}
// algbw = bytes / time; busbw = algbw * 2(n-1)/n (the bytes each rank's links
// carry in a ring all-reduce, so sizes and rank counts compare).
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_ranks.h"
#include "memcpy_ceiling.h"
#include "strata/runtime/world.h"
#include "strata/util/json.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

double timeAllReduce(strata::Communicator& comm, torch::Tensor t) {
  int64_t bytes = t.nbytes();
  int iterations = static_cast<int>(std::clamp<int64_t>((int64_t{512} << 20) / bytes, 5, 200));
  for (int i = 0; i < 3; ++i) comm.allReduce(t);
  comm.barrier();
  auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) comm.allReduce(t);
  return seconds(start) / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  if (strata::bench::spawnRanksIfParent(2, argv)) return 0;
  auto world = strata::World::init();
  torch::set_num_threads(1);
  double copy = world->rank() == 0 ? strata::bench::memcpyGbps() : 0;
  world->comm().barrier();
  int n = world->size();
  for (int64_t bytes = 4096; bytes <= (int64_t{64} << 20); bytes *= 4) {
    for (bool collective : {false, true}) {
      torch::Tensor tensor = collective ? world->comm().allocateCollectiveBuffer(bytes / 4, {})
                                        : torch::zeros({bytes / 4});
      double t = timeAllReduce(world->comm(), tensor.fill_(1));
      if (world->rank() != 0) continue;
      double algbw = bytes / t / 1e9;
      strata::bench::emitJson({{"bench", "allreduce"},
                               {"ranks", n},
                               {"bytes", bytes},
                               {"buffer", collective ? "collective" : "ordinary"},
                               {"algbw_gbps", strata::jsonNumber(algbw)},
                               {"busbw_gbps", strata::jsonNumber(algbw * 2 * (n - 1) / n)},
                               {"memcpy_gbps", strata::jsonNumber(copy)}});
    }
  }
  return 0;
}

// Mixture-of-experts benchmarks, each a JSON line:
//
//   moe_all_to_all: Communicator::allToAll between 2 local ranks, on the
//     shared-memory transport and on plain Gloo, for inputs of 64 KiB to
//     64 MiB per rank (half of it to the other rank): algbw = bytes sent to
//     the other rank / time, against this machine's single-thread memcpy
//     bandwidth measured in the same run.
//   moe_step: a Llama of 2 MoE blocks (8 experts of ffn 128, top 2) at dp 2
//     with ep 1 (every expert on both ranks) and ep 2 (4 on each), against
//     the dense Llama of the same active FLOPs (ffn 256); step times in
//     rounds interleaved, medians; and at ep 2 the share of the step rank 0
//     spent in the dispatch and combine all-to-alls.
//   moe_load_balance: 60 steps of the KJV text (Debian's bible-kjv; the
//     generated corpus when the `bible` command is missing) at ep 2, with the
//     balance loss (aux 0.01) and without: the max / mean tokens per expert
//     and layer over the last 10 steps.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "memcpy_ceiling.h"
#include "strata/runtime/world.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kPhaseVariable = "STRATA_BENCH_MOE_PHASE";

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double timeAllToAll(Communicator& comm, int64_t bytes) {
  int n = comm.size();
  int64_t rows = bytes / 4 / 256;  // rows of 256 float32
  at::Tensor input = torch::ones({rows, 256}), output = torch::empty({rows, 256});
  std::vector<int64_t> splits(static_cast<size_t>(n), rows / n);
  int iterations = static_cast<int>(std::clamp<int64_t>((int64_t{256} << 20) / bytes, 5, 200));
  for (int i = 0; i < 3; ++i) comm.allToAll(output, input, splits, splits);
  comm.barrier();
  auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) comm.allToAll(output, input, splits, splits);
  return since(start) / iterations;
}

void allToAllBandwidth(World& world, const char* transport) {
  Communicator& comm = world.comm();
  double copy = world.rank() == 0 ? memcpyGbps() : 0;
  comm.barrier();
  int n = comm.size();
  for (int64_t bytes = int64_t{64} << 10; bytes <= (int64_t{64} << 20); bytes *= 4) {
    double t = timeAllToAll(comm, bytes);
    if (world.rank() != 0) continue;
    double sent = static_cast<double>(bytes) * (n - 1) / n;
    double algbw = sent / t / 1e9;
    emitJson({{"bench", "moe_all_to_all"},
              {"transport", transport},
              {"ranks", n},
              {"bytes_per_rank", bytes},
              {"algbw_gbps", jsonNumber(algbw)},
              {"memcpy_gbps", jsonNumber(copy)},
              {"of_memcpy", jsonNumber(algbw / copy)}});
  }
}

train::TrainConfig llamaConfig(int64_t experts, int64_t ep) {
  train::TrainConfig c;
  c.model.architecture = "llama";
  c.model.layers = 2;
  c.model.hidden = 128;
  c.model.heads = 4;
  c.model.kvHeads = 2;
  c.model.ffn = 256;  // the dense model: top 2 x 128
  c.model.context = 256;
  c.model.tiedEmbeddings = false;
  c.model.moe.experts = experts;
  c.model.moe.topK = 2;
  c.model.moe.expertFfn = 128;
  c.parallel.dp = 2;
  c.parallel.ep = ep;
  c.train.seqLen = 256;
  c.train.globalBatch = 8;
  c.train.microBatch = 2;
  c.train.steps = 1000;
  c.train.warmupSteps = 1;
  c.train.stragglerEvery = 0;
  c.data.corpusBytes = 400000;
  return c;
}

double maxOver(Communicator& comm, double value) {
  at::Tensor t = torch::full({1}, value, torch::kDouble);
  comm.allReduce(t, ReduceOp::kMax);
  return t.item<double>();
}

void stepTimes(const std::shared_ptr<World>& world) {
  struct Run {
    const char* name;
    std::unique_ptr<train::Trainer> trainer;
    std::vector<double> seconds, exchange;
  };
  std::vector<Run> runs;
  runs.push_back({"dense", std::make_unique<train::Trainer>(llamaConfig(0, 1), world), {}, {}});
  runs.push_back({"moe_ep1", std::make_unique<train::Trainer>(llamaConfig(8, 1), world), {}, {}});
  runs.push_back({"moe_ep2", std::make_unique<train::Trainer>(llamaConfig(8, 2), world), {}, {}});
  for (Run& run : runs) run.trainer->step();  // warm-up
  for (int round = 0; round < 7; ++round) {
    for (Run& run : runs) {
      world->comm().barrier();
      auto start = Clock::now();
      train::StepReport report = run.trainer->step();
      run.seconds.push_back(maxOver(world->comm(), since(start)));
      run.exchange.push_back(report.moe.exchangeSeconds);
    }
  }
  if (world->rank() != 0) return;
  double dense = median(runs[0].seconds);
  nlohmann::ordered_json result = {
      {"bench", "moe_step"}, {"experts", 8}, {"top_k", 2}, {"tokens_per_step", 8 * 256}};
  for (const Run& run : runs)
    result[std::string(run.name) + "_s"] = jsonNumber(median(run.seconds));
  result["ep1_to_dense"] = jsonNumber(median(runs[1].seconds) / dense);
  result["ep2_to_dense"] = jsonNumber(median(runs[2].seconds) / dense);
  result["ep2_exchange_share"] = jsonNumber(median(runs[2].exchange) / median(runs[2].seconds));
  emitJson(result);
}

// The KJV text as one file, when Debian's `bible` command is there.
std::string kjvText() {
  std::string path = (std::filesystem::temp_directory_path() / "strata_bench_kjv.txt").string();
  if (std::filesystem::exists(path) && std::filesystem::file_size(path) > 0) return path;
  if (std::system(("bible -f gen1:1-rev22:21 > " + path + " 2>/dev/null").c_str()) != 0 ||
      std::filesystem::file_size(path) == 0)
    return "";
  return path;
}

void loadBalance(const std::shared_ptr<World>& world) {
  std::string text = world->rank() == 0 ? kjvText() : "";
  world->comm().barrier();
  if (world->rank() != 0) text = kjvText();  // made by rank 0; exists now or not at all
  nlohmann::ordered_json result = {
      {"bench", "moe_load_balance"}, {"data", text.empty() ? "generated" : "kjv"}, {"steps", 60}};
  for (double aux : {0.01, 0.0}) {
    train::TrainConfig c = llamaConfig(8, 2);
    c.model.moe.auxLossCoeff = aux;
    c.train.steps = 60;
    c.train.lr = 3e-3;
    if (!text.empty()) c.data.files = {text};
    train::Trainer trainer(c, world);
    std::vector<double> ratios;
    for (int step = 1; step <= 60; ++step) {
      train::StepReport report = trainer.step();
      if (step > 50) ratios.push_back(report.moe.tokensMax / report.moe.tokensMean);
    }
    result[aux > 0 ? "max_to_mean_with_aux" : "max_to_mean_without_aux"] =
        jsonNumber(median(ratios));
  }
  if (world->rank() == 0) emitJson(result);
}

int runRank() {
  std::shared_ptr<World> world = World::init();
  std::string phase = std::getenv(kPhaseVariable);
  if (phase == "shm") {
    allToAllBandwidth(*world, "shm");
    stepTimes(world);
    loadBalance(world);
  } else {
    allToAllBandwidth(*world, "gloo");
  }
  world->comm().barrier();
  return 0;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) {
  using strata::bench::kPhaseVariable;
  try {
    if (!std::getenv("RANK")) {
      strata::bench::spawnRanksIfParent(2, argv, {{kPhaseVariable, "shm"}},
                                        std::chrono::seconds(1200));
      strata::bench::spawnRanksIfParent(2, argv, {{kPhaseVariable, "gloo"}, {"STRATA_SHM", "0"}},
                                        std::chrono::seconds(600));
      return 0;
    }
    return strata::bench::runRank();
  } catch (const std::exception& error) {
    std::cerr << "bench_expert_parallel: " << error.what() << "\n";
    return 1;
  }
}

// Context parallelism on this machine, in two jobs of local ranks (one
// thread each), every figure measured in this run.
//
// Four ranks, groups of 1, 2 and 4 of them as cp 1, 2 and 4:
//   cp_activation_memory: the tensor bytes a Llama-style attention (hidden
//     256, 8 heads, 4 kv heads) and SwiGLU MLP (ffn 688) keep from forward
//     for backward on one rank, for one sequence of 1024 tokens, by cp
//     (counted at LibTorch's CPU allocator, tensor_memory.h). Goal: both
//     fall as 1/cp. At cp 1 LibTorch's fused kernel keeps q, k, v, its
//     output and log-sum-exp; under cp ring attention keeps the same for its
//     share of the sequence.
//   cp_longest_sequence: the longest power-of-two sequence (up to 16384)
//     whose forward and backward through one such block (hidden 512, 8
//     heads, 4 kv heads, ffn 1376) stays within 64 MiB of tensor memory on
//     every rank of the group.
//   cp_ring_balance: ring attention at cp 4 (8 heads of 64, 4096 tokens),
//     forward and backward: the block work each rank did, by its thread's
//     CPU clock (four ranks share two cores, so wall time would show the
//     scheduler), max / min over the ranks.
// Two ranks:
//   cp_ring_overlap: the same at cp 2, a core each: each rank's wait for
//     key/value hops once its block was done, and the same hop's transfer
//     time alone (a ring of sends and receives of that block, no compute);
//     hidden_fraction = 1 - wait / (hops x transfer), the median rank's;
//     once over the shared-memory transport (local groups' default, whose
//     point-to-point copies happen in the receiver's wait) and once over
//     Gloo's TCP alone (STRATA_SHM=0), whose I/O threads move the bytes
//     while the block computes.
//   cp_step: a training step (the Trainer; Llama, hidden 128, 2 layers, 4
//     heads, 2 kv heads, 2 sequences of 2048 tokens a step) at cp 2 with the
//     ring, cp 2 with the all-to-all, and dp 2 on whole sequences (the
//     unsplit sequence), rounds interleaved; medians.
//
// Two processes share this machine's two cores (half speed each under
// load), so times compare with each other, not with a one-process run.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "strata/context_parallel/context_parallel.h"
#include "strata/context_parallel/ring_attention.h"
#include "strata/report/tensor_memory.h"
#include "strata/runtime/world.h"
#include "strata/tensor_parallel/grouped_query_attention.h"
#include "strata/tensor_parallel/swiglu_mlp.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;
using context_parallel::ContextParallel;
using context_parallel::CpAlgorithm;
using train::installTensorMemoryCounter;
using train::liveTensorBytes;
using train::peakTensorBytes;
using train::resetPeakTensorBytes;

constexpr const char* kPhaseVariable = "STRATA_BENCH_CP_PHASE";
constexpr int64_t kBudgetBytes = int64_t{64} << 20;
constexpr int64_t kLongestTried = 16384;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Block {
  int64_t hidden, heads, kvHeads, ffn;
};

// One pre-norm-less Llama block's two halves, built for this rank: the
// attention over the cp group (nullptr: whole sequences) and the MLP.
struct BlockModules {
  tensor_parallel::ParallelGroupedQueryAttention attention{nullptr};
  tensor_parallel::ParallelSwiGluMlp mlp{nullptr};
};

BlockModules buildBlock(const Block& shape, const std::shared_ptr<Communicator>& solo,
                        std::shared_ptr<const ContextParallel> cp) {
  tensor_parallel::GroupedQueryAttentionOptions a;
  a.hidden = shape.hidden;
  a.heads = shape.heads;
  a.kvHeads = shape.kvHeads;
  a.contextParallel = std::move(cp);
  tensor_parallel::SwiGluMlpOptions m;
  m.hidden = shape.hidden;
  m.ffn = shape.ffn;
  return {tensor_parallel::ParallelGroupedQueryAttention(a, solo),
          tensor_parallel::ParallelSwiGluMlp(m, solo)};
}

std::shared_ptr<const ContextParallel> ringOver(const std::shared_ptr<Communicator>& group) {
  if (group->size() == 1) return nullptr;
  return std::make_shared<ContextParallel>(ContextParallel{group, CpAlgorithm::kRing});
}

// Bytes that stay live from forward until backward: what `forward` keeps.
int64_t keptBytes(const std::function<at::Tensor()>& forward) {
  int64_t before = liveTensorBytes();
  at::Tensor out = forward();
  return liveTensorBytes() - before;
}

// The groups of the four-rank phase: each rank alone (the tensor-parallel
// group of a one-rank tp), and the first 1, 2 and 4 ranks as cp groups
// (ranks outside one get a group of their own, unused).
struct Groups {
  std::shared_ptr<Communicator> solo;
  std::map<int, std::shared_ptr<Communicator>> firstRanks;
};

Groups makeGroups(World& world) {
  int rank = world.rank();
  Groups groups;
  groups.solo = world.newGroup("solo" + std::to_string(rank), {rank});
  for (int cp : {1, 2, 4}) {
    std::vector<int> members;
    for (int r = 0; r < cp; ++r) members.push_back(r);
    groups.firstRanks[cp] =
        rank < cp
            ? world.newGroup("first" + std::to_string(cp), members)
            : world.newGroup("outside" + std::to_string(cp) + "-" + std::to_string(rank), {rank});
  }
  return groups;
}

double maxOver(Communicator& group, double value) {
  at::Tensor t = torch::tensor({value}, torch::kDouble);
  group.allReduce(t, ReduceOp::kMax);
  return t.item<double>();
}

void activationMemory(World& world, const Groups& groups) {
  const Block shape{256, 8, 4, 688};
  const int64_t sequence = 1024;
  nlohmann::ordered_json attention = nlohmann::ordered_json::object(),
                         mlp = nlohmann::ordered_json::object();
  for (int cp : {1, 2, 4}) {
    if (world.rank() < cp) {
      torch::manual_seed(1);
      BlockModules block = buildBlock(shape, groups.solo, ringOver(groups.firstRanks.at(cp)));
      int64_t tokens = sequence / cp;
      at::Tensor x = torch::randn({tokens, 1, shape.hidden}).requires_grad_();
      int64_t a = keptBytes([&] { return block.attention(x); });
      int64_t m = keptBytes([&] { return block.mlp(x); });
      if (world.rank() == 0) {
        attention[std::to_string(cp)] = a;
        mlp[std::to_string(cp)] = m;
      }
    }
    world.comm().barrier();
  }
  if (world.rank() != 0) return;
  emitJson(
      {{"bench", "cp_activation_memory"},
       {"sequence", sequence},
       {"hidden", shape.hidden},
       {"attention_bytes_by_cp", attention},
       {"mlp_bytes_by_cp", mlp},
       {"attention_ratio_cp4_to_cp2", jsonNumber(double(attention["4"]) / double(attention["2"]))},
       {"mlp_ratio_cp2_to_cp1", jsonNumber(double(mlp["2"]) / double(mlp["1"]))},
       {"mlp_ratio_cp4_to_cp1", jsonNumber(double(mlp["4"]) / double(mlp["1"]))}});
}

// Peak tensor bytes of one block's forward and backward on this rank.
int64_t stepPeakBytes(BlockModules& block, int64_t tokens, int64_t hidden) {
  at::Tensor x = torch::randn({tokens, 1, hidden}).requires_grad_();
  resetPeakTensorBytes();
  int64_t base = liveTensorBytes();
  at::Tensor h = x + block.attention(x);
  at::Tensor y = h + block.mlp(h);
  y.sum().backward();
  return peakTensorBytes() - base;
}

void longestSequence(World& world, const Groups& groups) {
  const Block shape{512, 8, 4, 1376};
  nlohmann::ordered_json longest = nlohmann::ordered_json::object();
  for (int cp : {1, 2, 4}) {
    const std::shared_ptr<Communicator>& group = groups.firstRanks.at(cp);
    int64_t fits = 0;
    if (world.rank() < cp) {
      torch::manual_seed(1);
      BlockModules block = buildBlock(shape, groups.solo, ringOver(group));
      for (int64_t sequence = 512; sequence <= kLongestTried; sequence *= 2) {
        double peak = maxOver(*group, double(stepPeakBytes(block, sequence / cp, shape.hidden)));
        if (peak > double(kBudgetBytes)) break;
        fits = sequence;
      }
      if (world.rank() == 0) longest[std::to_string(cp)] = fits;
      std::cerr << "cp " << cp << ": longest sequence within 64 MiB " << fits << "\n";
    }
    world.comm().barrier();
  }
  if (world.rank() != 0) return;
  emitJson({{"bench", "cp_longest_sequence"},
            {"budget_bytes", kBudgetBytes},
            {"hidden", shape.hidden},
            {"longest_by_cp", longest}});
}

// One hop of a k/v block around the ring with nothing to hide behind.
double hopAlone(Communicator& ring, const at::Tensor& block) {
  std::vector<double> times;
  int next = (ring.rank() + 1) % ring.size(),
      previous = (ring.rank() + ring.size() - 1) % ring.size();
  for (int i = 0; i < 9; ++i) {
    at::Tensor in = at::empty_like(block);
    ring.barrier();
    auto start = Clock::now();
    WorkHandle send = ring.rank() % 2 == 0 ? ring.sendAsync(block, next, 9) : nullptr;
    WorkHandle recv = ring.recvAsync(in, previous, 9);
    if (!send) send = ring.sendAsync(block, next, 9);
    recv->wait();
    send->wait();
    times.push_back(since(start));
  }
  return median(times);
}

struct RingRun {
  context_parallel::RingTiming timing;
  double stepSeconds = 0;
  double hopAloneSeconds = 0;
};

// Ring attention over the whole world (8 heads of 64, `sequence` tokens),
// forward and backward, after one warm-up run.
RingRun ringRun(World& world, int64_t sequence) {
  const int64_t heads = 8, dim = 64;
  Communicator& ring = world.comm();
  int64_t tokens = sequence / ring.size();
  torch::manual_seed(1 + world.rank());
  at::Tensor q = torch::randn({1, heads, tokens, dim}).requires_grad_();
  at::Tensor k = torch::randn({1, heads, tokens, dim}).requires_grad_();
  at::Tensor v = torch::randn({1, heads, tokens, dim}).requires_grad_();
  context_parallel::RingTiming warm;
  context_parallel::ringAttention(q, k, v, ring, &warm).sum().backward();
  RingRun run;
  ring.barrier();
  auto start = Clock::now();
  context_parallel::ringAttention(q, k, v, ring, &run.timing).sum().backward();
  run.stepSeconds = since(start);
  run.hopAloneSeconds = hopAlone(ring, at::stack({k.detach(), v.detach()}).contiguous());
  return run;
}

// Every rank's values, rank 0 first.
std::vector<double> gatherOne(Communicator& group, double value) {
  at::Tensor all = torch::empty({group.size()}, torch::kDouble);
  group.allGather(all, torch::tensor({value}, torch::kDouble));
  return std::vector<double>(all.data_ptr<double>(), all.data_ptr<double>() + group.size());
}

double spread(const std::vector<double>& values) {
  return *std::max_element(values.begin(), values.end()) /
         *std::min_element(values.begin(), values.end());
}

// cp 4: the block work each rank did (thread CPU time, which the sharing of
// two cores by four ranks does not stretch): the load balance.
void ringBalance(World& world) {
  RingRun run = ringRun(world, 4096);
  std::vector<double> cpu = gatherOne(world.comm(), run.timing.computeCpuSeconds);
  if (world.rank() != 0) return;
  emitJson({{"bench", "cp_ring_balance"},
            {"cp", world.size()},
            {"sequence", 4096},
            {"compute_cpu_s_by_rank", cpu},
            {"max_over_min", jsonNumber(spread(cpu))}});
}

// cp 2, a core each: how much of the key/value hops the block compute hides.
void ringOverlap(World& world) {
  RingRun run = ringRun(world, 4096);
  const context_parallel::RingTiming& t = run.timing;
  double hidden = 1 - t.hopWaitSeconds / (double(t.hops) * run.hopAloneSeconds);
  std::vector<double> shares = gatherOne(world.comm(), hidden);
  std::vector<double> waits = gatherOne(world.comm(), t.hopWaitSeconds);
  std::vector<double> alone = gatherOne(world.comm(), run.hopAloneSeconds);
  std::vector<double> compute = gatherOne(world.comm(), t.computeSeconds);
  if (world.rank() != 0) return;
  emitJson({{"bench", "cp_ring_overlap"},
            {"cp", world.size()},
            {"transport", world.comm().backend()},
            {"sequence", 4096},
            {"hops_per_rank", t.hops},
            {"hidden_fraction", jsonNumber(median(shares))},
            {"hop_wait_s_by_rank", waits},
            {"hop_alone_s_by_rank", alone},
            {"compute_s_by_rank", compute},
            {"step_s", jsonNumber(run.stepSeconds)}});
}

train::TrainConfig stepConfig(int64_t dp, int64_t cp, const std::string& algorithm) {
  train::TrainConfig c;
  c.model.architecture = "llama";
  c.model.layers = 2;
  c.model.hidden = 128;
  c.model.heads = 4;
  c.model.kvHeads = 2;
  c.model.ffn = 344;
  c.model.context = 2048;
  c.model.tiedEmbeddings = false;
  c.parallel.dp = dp;
  c.parallel.cp = cp;
  c.parallel.cpAlgorithm = algorithm;
  c.train.seqLen = 2048;
  c.train.globalBatch = 2;
  c.train.microBatch = 1;
  c.train.steps = 1000;
  c.train.warmupSteps = 1;
  c.data.corpusBytes = 200000;
  c.train.stragglerEvery = 0;
  return c;
}

void stepTimes(const std::shared_ptr<World>& world) {
  struct Run {
    const char* name;
    std::unique_ptr<train::Trainer> trainer;
  };
  std::vector<Run> runs;
  runs.push_back({"cp2_ring", std::make_unique<train::Trainer>(stepConfig(1, 2, "ring"), world)});
  runs.push_back(
      {"cp2_all_to_all", std::make_unique<train::Trainer>(stepConfig(1, 2, "all-to-all"), world)});
  runs.push_back({"dp2_whole", std::make_unique<train::Trainer>(stepConfig(2, 1, "ring"), world)});
  for (Run& run : runs) run.trainer->step();  // warm-up
  std::vector<std::vector<double>> seconds(runs.size());
  for (int round = 0; round < 5; ++round) {
    for (size_t i = 0; i < runs.size(); ++i) {
      world->comm().barrier();
      auto start = Clock::now();
      runs[i].trainer->step();
      seconds[i].push_back(maxOver(world->comm(), since(start)));
    }
  }
  if (world->rank() != 0) return;
  double whole = median(seconds[2]);
  nlohmann::ordered_json result = {{"bench", "cp_step"}, {"tokens_per_step", 2 * 2048}};
  for (size_t i = 0; i < runs.size(); ++i)
    result[std::string(runs[i].name) + "_s"] = jsonNumber(median(seconds[i]));
  result["ring_to_whole"] = jsonNumber(median(seconds[0]) / whole);
  result["all_to_all_to_whole"] = jsonNumber(median(seconds[1]) / whole);
  emitJson(result);
}

int runRank() {
  std::shared_ptr<World> world = World::init();
  std::string phase = std::getenv(kPhaseVariable);
  if (phase == "four") {
    installTensorMemoryCounter();
    Groups groups = makeGroups(*world);
    activationMemory(*world, groups);
    longestSequence(*world, groups);
    ringBalance(*world);
  } else if (phase == "two") {
    ringOverlap(*world);
    stepTimes(world);
  } else {
    ringOverlap(*world);  // over Gloo alone (STRATA_SHM=0)
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
      strata::bench::spawnRanksIfParent(4, argv, {{kPhaseVariable, "four"}},
                                        std::chrono::seconds(900));
      strata::bench::spawnRanksIfParent(2, argv, {{kPhaseVariable, "two"}},
                                        std::chrono::seconds(900));
      strata::bench::spawnRanksIfParent(2, argv, {{kPhaseVariable, "gloo"}, {"STRATA_SHM", "0"}},
                                        std::chrono::seconds(900));
      return 0;
    }
    return strata::bench::runRank();
  } catch (const std::exception& error) {
    std::cerr << "bench_context_parallel: " << error.what() << "\n";
    return 1;
  }
}

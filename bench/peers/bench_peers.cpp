// Strata beside PyTorch's own parallel forms, in one run: data parallel
// against DistributedDataParallel, ZeRO-3 against FSDP2, tensor parallel
// against DTensor, and each pipeline schedule against
// torch.distributed.pipelining's, on this machine's CPU with Gloo.
//
// Both sides train the same Llama (peer_rows.h) from the same initial
// weights (Strata's, exported under Hugging Face's names for the Python
// side) on the same batches (Strata's reader's), each in processes of its
// own with one thread a rank, launched alike with the torchrun variables.
// Per row the two sides alternate, kAlternations rounds each; a round is
// kWarmup untimed steps and kSteps timed ones, and a side's time is its
// slowest rank's. Each row prints a JSON line: both sides' seconds per step
// (their best round), tokens/s, peak resident memory of their largest rank,
// ratio = pytorch_step_s / strata_step_s (> 1: Strata is faster) beside its
// goal, and whether the losses were equal (within kLossTolerance, every
// step of every round).
//
// bench_peers --smoke: a small model, one round of two steps; exits 1 when
// any row's losses differ (the test of the benchmark and its peers).
// bench_peers ROW...: those rows only (dp, zero3, tp, deepspeed-zero2, ...).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_env.h"
#include "bench_ranks.h"
#include "peer_rows.h"
#include "strata/config/model_spec.h"
#include "strata/formats/safetensors_set.h"
#include "strata/models/model_family.h"
#include "strata/runtime/world.h"
#include "strata/train/data_source.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"
#include "strata/util/openblas_core.h"
#include "strata/util/subprocess.h"

namespace strata::bench {
namespace {

namespace fs = std::filesystem;

constexpr double kLossTolerance = 1e-4;
constexpr std::chrono::seconds kRankTimeout{900};

struct Plan {
  bool smoke = false;
  int warmup = 2, steps = 5, alternations = 2;
  std::string dir;  // inputs and each round's rank results
};

Plan planOf(bool smoke) {
  Plan plan = smoke ? Plan{true, 0, 2, 1, ""} : Plan{};
  const char* inherited = std::getenv("STRATA_PEERS_DIR");
  plan.dir = inherited
                 ? inherited
                 : (fs::temp_directory_path() / ("strata_bench_peers_" + std::to_string(getpid())))
                       .string();
  return plan;
}

// The folder of one row's inputs and rank results.
std::string rowDir(const Plan& plan, const PeerRow& row) { return plan.dir + "/" + row.name; }

// --- inputs both sides read ------------------------------------------------

void writeConfigJson(const train::TrainConfig& c, const std::string& path) {
  nlohmann::json json = {{"layers", c.model.layers},
                         {"hidden", c.model.hidden},
                         {"heads", c.model.heads},
                         {"kv_heads", c.model.kvHeads},
                         {"ffn", c.model.ffn},
                         {"vocab", c.model.vocab},
                         {"rope_theta", c.model.ropeTheta},
                         {"rms_norm_eps", c.model.rmsNormEps},
                         {"lr", c.train.lr},
                         {"weight_decay", c.train.weightDecay},
                         {"beta1", c.train.beta1},
                         {"beta2", c.train.beta2},
                         {"eps", c.train.eps},
                         {"seq_len", c.train.seqLen},
                         {"global_batch", c.train.globalBatch},
                         {"micro_batch", 2}};
  std::ofstream(path) << json.dump(2);
}

// The one-process model every rank of every layout starts from (each builds
// its part from the same seed), under Hugging Face's names.
void writeInitialWeights(const train::TrainConfig& c, const std::string& path) {
  auto world = singleProcessWorld();
  auto groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  models::ModelSpec spec = train::modelSpecOf(c);
  const models::ModelFamily& family = models::modelFamily(spec.architecture);
  torch::nn::Sequential model = family.build(spec, groups.tp);
  auto layout = family.huggingFace(spec);
  auto named = model->named_parameters();
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const models::HuggingFaceTensor& t : layout->tensors())
    tensors.emplace_back(t.huggingFace, layout->toHuggingFace(t.strata, named[t.strata]));
  formats::writeShardedSafetensors(path, tensors, {{"format", "pt"}}, 0);
}

// The global batches of one replica of Strata's reader, [steps, batch, seq].
void writeBatches(const train::TrainConfig& c, int steps, const std::string& path) {
  train::DataSplit data = train::makeDataSplit(c);
  train::BatchReader reader = train::makeTrainReader(data, c, 0);
  std::vector<at::Tensor> inputs, targets;
  for (int i = 0; i < steps; ++i) {
    train::Batch batch = reader.next();
    inputs.push_back(batch.input);
    targets.push_back(batch.target);
  }
  c10::Dict<std::string, at::Tensor> batches;
  batches.insert("input", torch::stack(inputs));
  batches.insert("target", torch::stack(targets));
  std::vector<char> bytes = torch::pickle_save(c10::IValue(batches));
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The row's model, weights and batches, in its folder.
void writeInputs(const Plan& plan, const PeerRow& row) {
  std::string dir = rowDir(plan, row);
  fs::create_directories(dir);
  writeConfigJson(row.config, dir + "/config.json");
  writeInitialWeights(row.config, dir + "/weights.safetensors");
  train::TrainConfig oneReplica = row.config;
  oneReplica.parallel = train::ParallelConfig{};
  writeBatches(oneReplica, plan.warmup + plan.steps, dir + "/batches.pt");
}

// --- one side's round --------------------------------------------------------

struct RoundResult {
  double stepSeconds = 0;      // the slowest rank's
  int64_t peakRssBytes = 0;    // the largest rank's
  std::vector<double> losses;  // every step's, from a rank that saw them
  std::string setting;         // what the PyTorch peer used
  std::string version;
  double computeSeconds = 0;  // Strata's: the busiest rank's forward and backward a step
  double bubble = 0;          // Strata's: the largest measured pipeline idle share
};

// Where a Strata rank's timed steps went: its forward and backward work
// (the trace's compute events) and the rest, waits and the optimizer.
struct StrataProfile {
  double computeSeconds = 0;
  double bubble = 0;  // the measured pipeline idle share, mean over the steps
};

void writeRankResult(const std::string& path, double seconds, int steps,
                     const std::vector<double>& losses, const StrataProfile& profile) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  nlohmann::json json = {{"seconds", seconds},
                         {"steps", steps},
                         {"losses", losses},
                         {"max_rss_bytes", static_cast<int64_t>(usage.ru_maxrss) * 1024},
                         {"compute_s", profile.computeSeconds / steps},
                         {"bubble", profile.bubble / steps}};
  std::ofstream(path) << json.dump();
}

RoundResult readRound(const std::string& dir, const std::string& side, int ranks) {
  RoundResult round;
  for (int rank = 0; rank < ranks; ++rank) {
    std::string path = dir + "/" + side + "-rank-" + std::to_string(rank) + ".json";
    nlohmann::json json;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("no result from " + side + " rank " + std::to_string(rank));
    in >> json;
    round.stepSeconds =
        std::max(round.stepSeconds, json["seconds"].get<double>() / json["steps"].get<double>());
    round.peakRssBytes = std::max(round.peakRssBytes, json["max_rss_bytes"].get<int64_t>());
    if (round.losses.empty()) round.losses = json["losses"].get<std::vector<double>>();
    if (json.contains("setting")) round.setting = json["setting"].get<std::string>();
    if (json.contains("torch")) round.version = json["torch"].get<std::string>();
    if (json.contains("compute_s")) {
      round.computeSeconds = std::max(round.computeSeconds, json["compute_s"].get<double>());
      round.bubble = std::max(round.bubble, json["bubble"].get<double>());
    }
    fs::remove(path);
  }
  return round;
}

// In a rank: Strata's layout of the row, timed as peer.py times PyTorch's.
void runStrataRank(const Plan& plan, const PeerRow& row) {
  auto world = World::init();
  train::Trainer trainer(row.config, world);
  std::vector<double> losses;
  for (int i = 0; i < plan.warmup; ++i) losses.push_back(trainer.step().loss);
  world->comm().barrier();
  auto start = std::chrono::steady_clock::now();
  StrataProfile profile;
  for (int i = 0; i < plan.steps; ++i) {
    train::StepReport report = trainer.step();
    losses.push_back(report.loss);
    profile.computeSeconds += report.computeSeconds;
    profile.bubble += report.bubble;
  }
  std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  writeRankResult(rowDir(plan, row) + "/strata-rank-" + std::to_string(world->rank()) + ".json",
                  seconds.count(), plan.steps, losses, profile);
  world->comm().barrier();
}

RoundResult strataRound(char** argv, const Plan& plan, const PeerRow& row) {
  spawnRanksIfParent(row.ranks, argv,
                     {{"STRATA_PEERS_ROW", row.name}, {"STRATA_PEERS_DIR", plan.dir}},
                     kRankTimeout);
  return readRound(rowDir(plan, row), "strata", row.ranks);
}

// A rank's stderr, kept in a file: its last error line says why it failed.
struct RankLog {
  std::string path;
  int fd = -1;
};

std::string lastErrorLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, found;
  while (std::getline(in, line))
    if (line.find("Error") != std::string::npos) found = line;
  return found.empty() ? "(no error line in " + path + ")" : found;
}

RoundResult pytorchRound(const Plan& plan, const PeerRow& row) {
  int port = freeLoopbackPort();
  std::vector<pid_t> pids;
  std::vector<RankLog> logs;
  for (int rank = 0; rank < row.ranks; ++rank) {
    std::string log = rowDir(plan, row) + "/pytorch-rank-" + std::to_string(rank) + ".log";
    logs.push_back({log, ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)});
    SpawnSpec spec;
    spec.argv = {peerPython(),
                 sourceDir() + "/scripts/peers/peer.py",
                 row.pytorchForm,
                 rowDir(plan, row) + "/config.json",
                 rowDir(plan, row) + "/weights.safetensors",
                 rowDir(plan, row) + "/batches.pt",
                 rowDir(plan, row),
                 std::to_string(plan.warmup),
                 std::to_string(plan.steps)};
    spec.stdoutFd = spec.stderrFd = logs.back().fd;
    spec.setEnv = {{"RANK", std::to_string(rank)},
                   {"WORLD_SIZE", std::to_string(row.ranks)},
                   {"LOCAL_RANK", std::to_string(rank)},
                   {"LOCAL_WORLD_SIZE", std::to_string(row.ranks)},
                   {"MASTER_ADDR", "127.0.0.1"},
                   {"MASTER_PORT", std::to_string(port)},
                   {"OMP_NUM_THREADS", "1"}};
    pids.push_back(spawnProcess(spec));
  }
  try {
    waitForRanks(pids, "PyTorch " + row.pytorchName, kRankTimeout);
  } catch (const std::runtime_error& e) {
    for (const RankLog& log : logs) ::close(log.fd);
    throw std::runtime_error(std::string(e.what()) + ": " + lastErrorLine(logs[0].path));
  }
  for (const RankLog& log : logs) ::close(log.fd);
  return readRound(rowDir(plan, row), "pytorch", row.ranks);
}

// --- the comparison ----------------------------------------------------------

double largestLossDifference(const RoundResult& a, const RoundResult& b) {
  if (a.losses.size() != b.losses.size() || a.losses.empty()) return 1e9;
  double largest = 0;
  for (size_t i = 0; i < a.losses.size(); ++i)
    largest = std::max(largest, std::abs(a.losses[i] - b.losses[i]));
  return largest;
}

// A row whose PyTorch side cannot run here: Strata's figures and why.
void emitWithoutPeer(const PeerRow& row, const RoundResult& strata, const std::string& why) {
  double tokens = static_cast<double>(row.config.train.globalBatch * row.config.train.seqLen);
  emitJson(
      {{"bench", "peers"},
       {"form", row.name},
       {"ranks", row.ranks},
       {"pytorch", row.pytorchName},
       {"pytorch_error", why},
       {"strata_step_s", jsonNumber(strata.stepSeconds)},
       {"strata_tokens_per_s", jsonNumber(tokens / strata.stepSeconds)},
       {"strata_peak_rss_mib", jsonNumber(static_cast<double>(strata.peakRssBytes) / (1 << 20))},
       {"strata_compute_s", jsonNumber(strata.computeSeconds)}});
}

// Runs the row's rounds and prints its line; returns whether the losses agreed.
bool compare(char** argv, const Plan& plan, const PeerRow& row) {
  RoundResult strata, pytorch;
  double lossDifference = 0;
  for (int i = 0; i < plan.alternations; ++i) {
    RoundResult s = strataRound(argv, plan, row), p;
    try {
      p = pytorchRound(plan, row);
    } catch (const std::runtime_error& e) {
      if (!row.pytorchMayFail) throw;
      std::cerr << "peers: " << row.name << ": PyTorch's side failed: " << e.what() << std::endl;
      emitWithoutPeer(row, s, e.what());
      return true;
    }
    lossDifference = std::max(lossDifference, largestLossDifference(s, p));
    std::cerr << "peers: " << row.name << " round " << i + 1 << ": Strata " << s.stepSeconds
              << " s/step, PyTorch " << row.pytorchName << " " << p.stepSeconds << " s/step"
              << std::endl;
    if (i == 0 || s.stepSeconds < strata.stepSeconds) strata = s;
    if (i == 0 || p.stepSeconds < pytorch.stepSeconds) pytorch = p;
  }
  double tokens = static_cast<double>(row.config.train.globalBatch * row.config.train.seqLen);
  double ratio = pytorch.stepSeconds / strata.stepSeconds;
  bool equal = lossDifference <= kLossTolerance;
  emitJson(
      {{"bench", "peers"},
       {"form", row.name},
       {"ranks", row.ranks},
       {"pytorch", row.pytorchName},
       {"pytorch_version", pytorch.version},
       {"pytorch_setting", pytorch.setting},
       {"strata_step_s", jsonNumber(strata.stepSeconds)},
       {"pytorch_step_s", jsonNumber(pytorch.stepSeconds)},
       {"ratio", jsonNumber(ratio)},
       {"goal", jsonNumber(row.goal)},
       {"goal_met", ratio >= row.goal},
       {"strata_tokens_per_s", jsonNumber(tokens / strata.stepSeconds)},
       {"pytorch_tokens_per_s", jsonNumber(tokens / pytorch.stepSeconds)},
       {"strata_peak_rss_mib", jsonNumber(static_cast<double>(strata.peakRssBytes) / (1 << 20))},
       {"pytorch_peak_rss_mib", jsonNumber(static_cast<double>(pytorch.peakRssBytes) / (1 << 20))},
       {"strata_compute_s", jsonNumber(strata.computeSeconds)},
       {"strata_bubble", jsonNumber(strata.bubble)},
       {"losses_equal", equal},
       {"loss_max_diff", jsonNumber(lossDifference)},
       {"strata_last_loss", jsonNumber(strata.losses.empty() ? 0 : strata.losses.back())},
       {"pytorch_last_loss", jsonNumber(pytorch.losses.empty() ? 0 : pytorch.losses.back())}});
  return equal;
}

const PeerRow& rowNamed(const std::vector<PeerRow>& rows, const std::string& name) {
  for (const PeerRow& row : rows)
    if (row.name == name) return row;
  throw std::runtime_error("no row '" + name + "'");
}

// The rows named on the command line (all when none is), in their order.
std::vector<PeerRow> chosenRows(std::vector<PeerRow> rows, const std::vector<std::string>& names) {
  if (names.empty()) return rows;
  std::vector<PeerRow> chosen;
  for (const std::string& name : names) chosen.push_back(rowNamed(rows, name));
  return chosen;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) {
  using namespace strata::bench;
  // Both sides, and PyTorch's ranks, with the kernels this CPU runs
  // (strata/util/openblas_core.h).
  strata::reexecWithBetterOpenBlasCore(argv);
  bool smoke = false;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--smoke")
      smoke = true;
    else
      names.push_back(arg);
  }
  Plan plan = planOf(smoke);
  std::vector<PeerRow> rows = peerRows(peerBaseConfig(smoke), smoke);
  if (const char* row = std::getenv("STRATA_PEERS_ROW")) {
    runStrataRank(plan, rowNamed(rows, row));
    return 0;
  }
  try {
    rows = chosenRows(rows, names);
  } catch (const std::runtime_error& e) {
    std::cerr << "bench_peers: " << e.what() << "; rows:";
    for (const PeerRow& row : peerRows(peerBaseConfig(smoke), smoke)) std::cerr << " " << row.name;
    std::cerr << std::endl;
    return 2;
  }
  bool allEqual = true;
  for (const PeerRow& row : rows) {
    writeInputs(plan, row);
    allEqual = compare(argv, plan, row) && allEqual;
  }
  fs::remove_all(plan.dir);
  return smoke && !allEqual ? 1 : 0;
}

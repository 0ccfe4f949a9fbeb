#include "plan_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "plan_failures.h"
#include "plan_job.h"
#include "strata/plan/errors.h"
#include "strata/plan/search.h"
#include "strata/schedule/error.h"
#include "strata/util/cli_flags.h"
#include "strata/util/json.h"

namespace strata {
namespace {

using plan::Estimate;

// Counts and sizes of a plan are ints.
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

struct PlanOptions {
  std::string model = "gpt2-small", cluster = "cpu-local", clusterFile, profile, config, layout;
  std::string architecture;  // "": the model's own
  std::optional<int64_t> layers, hidden, heads, ffn, vocab, seqLen, kvHeads, globalBatch;
  std::optional<int64_t> experts, topK, expertFfn, sharedExperts, moeEvery;
  std::string finetune, loraTargets;
  std::optional<int64_t> loraRank;
  std::optional<double> loraDropout;
  std::string baseDtype;
  std::optional<double> failuresPerDeviceHour, restartSeconds;
  int64_t nodes = 0, top = 5, maxCp = 0, maxEp = 0, simulateFailures = 0;
  double tokens = 0, efficiency = 0;
  bool explain = false, json = false, allowCrossNodeTp = false, evenStages = false;
};

std::string listOf(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The [model.moe] shape, named as strata train's flags name it.
void addMoeFlags(CLI::App& command, PlanOptions& o) {
  addOptionalIntFlag(command, "--moe-experts", &o.experts,
                     "routed experts of each mixture-of-experts MLP (0: dense)", "the model's", 0,
                     kIntMax);
  addOptionalIntFlag(command, "--moe-top-k", &o.topK, "experts each token is routed to",
                     "the model's", 1, kIntMax);
  addOptionalIntFlag(command, "--moe-expert-ffn", &o.expertFfn, "each expert's SwiGLU inner width",
                     "the model's", 1, kIntMax);
  addOptionalIntFlag(command, "--moe-shared-experts", &o.sharedExperts,
                     "always-active experts besides the routed ones", "the model's", 0, kIntMax);
  addOptionalIntFlag(command, "--moe-every", &o.moeEvery,
                     "an MoE MLP in every Nth layer (1: every layer; 2: layers 1, 3, ...)",
                     "the model's", 1, kIntMax);
}

void addModelFlags(CLI::App& command, PlanOptions& o) {
  addTextFlag(command, "--model", &o.model, "model preset: " + listOf(plan::modelPresetNames()));
  addTextFlag(command, "--config", &o.config,
              "a strata train config file: its model, seq_len, global batch, precision, and "
              "its layout for --layout config (instead of --model)");
  addTextFlag(command, "--profile", &o.profile,
              "measured profile file (model and per-layer times, e.g. written by "
              "bench_planner_calibration); replaces --model and FLOP-based compute");
  addOptionalIntFlag(command, "--layers", &o.layers, "transformer layers", "the model's", 1,
                     kIntMax);
  addOptionalIntFlag(command, "--hidden", &o.hidden, "hidden size", "the model's", 1, kIntMax);
  addOptionalIntFlag(command, "--heads", &o.heads, "attention heads (must divide --hidden)",
                     "the model's", 1, kIntMax);
  addOptionalIntFlag(command, "--ffn", &o.ffn, "MLP inner size", "the model's", 1, kIntMax);
  addOptionalIntFlag(command, "--vocab", &o.vocab, "vocabulary size", "the model's", 1, kIntMax);
  addOptionalIntFlag(command, "--seq-len", &o.seqLen, "sequence length", "the model's", 1, kIntMax);
  addTextFlag(command, "--architecture", &o.architecture,
              "model family as strata train names it: " + listOf(plan::architectureNames()) +
                  " (llama: GQA, SwiGLU, RMSNorm, RoPE, no biases, untied head); default the "
                  "model's");
  addOptionalIntFlag(command, "--kv-heads", &o.kvHeads,
                     "key/value heads of grouped-query attention (must divide --heads; 0: as "
                     "many as heads; llama only)",
                     "the model's", 0, kIntMax);
  addMoeFlags(command, o);
  addTextFlag(command, "--finetune", &o.finetune,
              "full (every weight trains) or lora (adapters on a frozen base; llama only); "
              "default --config's, else full");
  addOptionalIntFlag(command, "--lora-rank", &o.loraRank, "the LoRA adapters' rank r",
                     "--config's, else 8", 1, kIntMax);
  addTextFlag(command, "--lora-targets", &o.loraTargets,
              "projections that carry adapters, comma-separated: q, k, v, o, gate, up, down "
              "(default --config's, else q,v)");
  addOptionalRealFlag(command, "--lora-dropout", &o.loraDropout,
                      "dropout on the adapters' input, in [0, 1)", "--config's, else 0");
  addTextFlag(command, "--base-dtype", &o.baseDtype,
              "the frozen base's projection weights in fp32 or bf16, for a run whose weights are "
              "fp32 (a strata train config's; a preset's are bf16 already); default --config's, "
              "else fp32");
}

void addFlags(CLI::App& command, PlanOptions& o) {
  addModelFlags(command, o);
  addTextFlag(command, "--cluster", &o.cluster,
              "cluster preset: " + listOf(plan::clusterPresetNames()));
  addTextFlag(command, "--cluster-file", &o.clusterFile,
              "cluster description file (overrides --cluster; see deploy/rehearsal-cluster.toml)");
  addIntFlag(command, "--nodes", &o.nodes, "nodes to use (0: the cluster's own count)", 0);
  addOptionalIntFlag(command, "--global-batch", &o.globalBatch, "sequences per iteration",
                     "--config's, else 8", 1, kIntMax);
  addRealFlag(command, "--tokens", &o.tokens,
              "tokens to train on, for days to train (e.g. 300e9) and with failures");
  addOptionalRealFlag(command, "--failures-per-gpu-hour", &o.failuresPerDeviceHour,
                      "unexpected interruptions per device-hour, for the time to train with "
                      "failures (0: none)",
                      "the cluster's");
  addOptionalRealFlag(command, "--restart-seconds", &o.restartSeconds,
                      "seconds from a failure to training again from a checkpoint",
                      "the cluster's");
  addIntFlag(command, "--simulate-failures", &o.simulateFailures,
             "simulate this many whole runs with failures and print the spread of their days "
             "to train (needs --tokens)",
             0, kIntMax);
  addIntFlag(command, "--top", &o.top, "layouts to print", 1);
  addIntFlag(command, "--max-cp", &o.maxCp,
             "the largest context-parallel degree the search tries (1: none; 0: any that "
             "divides the devices and splits the sequence)",
             0, kIntMax);
  addIntFlag(command, "--max-ep", &o.maxEp,
             "the largest expert-parallel degree the search tries for a mixture-of-experts model "
             "(1: none; 0: any that divides dp x cp and the experts)",
             0, kIntMax);
  addTextFlag(command, "--layout", &o.layout,
              "predict this one layout, e.g. pp8,tp8,dp24,mb1,1f1b,zero1,recompute,sp (schedules: "
              "gpipe, 1f1b, interleaved-1f1b with vN, zb-h1, and zb-v and dualpipe-v, which place "
              "2 pp stages in a V), or "
              "tp8,cp4,zero3,recompute,sp for context parallelism (cp4: every sequence over 4 "
              "ranks, by ring attention; cp-a2a: by all-to-all), or tp2,dp16,ep8,zero1 for expert "
              "parallelism (ep8: each MoE layer's experts over 8 of the dp x cp ranks) (dp "
              "defaults to what the devices leave), or 'config' for --config's");
  addRealFlag(command, "--efficiency", &o.efficiency,
              "achieved fraction of peak FLOP/s (0: the cluster's calibrated value)");
  addSwitch(command, "allow-cross-node-tp", &o.allowCrossNodeTp, "let tp groups span nodes");
  addSwitch(command, "even-stages", &o.evenStages,
            "require layers to divide by pp x v (otherwise stages are cut by the balanced "
            "partitioner)");
  addSwitch(command, "explain", &o.explain, "show where the best layout's time and memory go");
  addSwitch(command, "json", &o.json, "print one JSON object per layout instead of a table");
}

std::optional<int> narrow(const std::optional<int64_t>& value) {
  if (!value) return std::nullopt;
  return static_cast<int>(*value);  // the flags' range is int's
}

PlanRequest requestOf(const PlanOptions& o, bool modelGiven, ConfigModelReader initFromModel) {
  PlanRequest r;
  r.initFromModel = std::move(initFromModel);
  if (modelGiven) r.model = o.model;
  r.config = o.config;
  r.profile = o.profile;
  r.sizes = {narrow(o.layers), narrow(o.hidden), narrow(o.heads), narrow(o.ffn),
             narrow(o.vocab),  narrow(o.seqLen), std::nullopt,    narrow(o.kvHeads)};
  if (!o.architecture.empty()) r.sizes.architecture = o.architecture;
  r.sizes.experts = narrow(o.experts);
  r.sizes.topK = narrow(o.topK);
  r.sizes.expertFfn = narrow(o.expertFfn);
  r.sizes.sharedExperts = narrow(o.sharedExperts);
  r.sizes.moeEvery = narrow(o.moeEvery);
  r.finetune = o.finetune;
  r.loraRank = narrow(o.loraRank);
  r.loraTargets = o.loraTargets;
  r.loraDropout = o.loraDropout;
  r.baseDtype = o.baseDtype;
  r.cluster = o.cluster;
  r.clusterFile = o.clusterFile;
  r.nodes = static_cast<int>(o.nodes);
  r.globalBatch = narrow(o.globalBatch);
  r.tokens = o.tokens;
  r.efficiency = o.efficiency;
  r.failuresPerDeviceHour = o.failuresPerDeviceHour;
  r.restartSeconds = o.restartSeconds;
  r.allowCrossNodeTp = o.allowCrossNodeTp;
  r.evenStages = o.evenStages;
  return r;
}

plan::Layout fixedLayout(const PlanOptions& o, const PlannedJob& planned) {
  if (o.layout == "config") {
    if (!planned.configLayout)
      throw plan::PlanError(
          "--layout config predicts the layout of a strata train config; "
          "give it with --config FILE");
    return *planned.configLayout;
  }
  plan::Layout layout = plan::parseLayout(o.layout);
  bool dpGiven = ("," + o.layout).find(",dp") != std::string::npos;
  if (!dpGiven)
    layout.dp =
        std::max(1, planned.job.cluster.totalDevices() / (layout.pp * layout.tp * layout.cp));
  return layout;
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

void printJson(std::ostream& out, int rank, const Estimate& e, const plan::TrainingJob& job) {
  nlohmann::ordered_json line = {
      {"rank", rank},
      {"layout", plan::toString(e.layout)},
      {"micro_batches", e.microBatches},
      {"iteration_s", jsonNumber(e.iterationSeconds)},
      {"samples_per_s", jsonNumber(e.samplesPerSecond)},
      {"tokens_per_s", jsonNumber(e.tokensPerSecond)},
      {"model_tflops_per_device", jsonNumber(e.modelFlopsPerDevice / 1e12)},
      {"hardware_tflops_per_device", jsonNumber(e.hardwareFlopsPerDevice / 1e12)},
      {"mfu", jsonNumber(e.mfu)},
      {"memory_gib", jsonNumber(gib(e.memory.total()))},
      {"days_to_train", jsonNumber(e.daysToTrain)},
      {"compute_s", jsonNumber(e.time.compute)},
      {"recompute_s", jsonNumber(e.time.recompute)},
      {"bubble_s", jsonNumber(e.time.bubble)},
      {"tp_comm_s", jsonNumber(e.time.tpComm)},
      {"cp_comm_s", jsonNumber(e.time.cpComm)},
      {"ep_comm_s", jsonNumber(e.time.epComm)},
      {"pp_comm_s", jsonNumber(e.time.ppComm)},
      {"dp_exposed_s", jsonNumber(e.time.dpExposed)},
      {"optimizer_s", jsonNumber(e.time.optimizer)}};
  addFailureFields(line, job, e);
  out << dumpJson(line) << "\n";
}

// The layout column: 46 characters, wider when a layout's text is longer
// (context and expert parallelism add `,cp8,cp-a2a,ep8`).
int layoutWidth(const std::vector<Estimate>& best) {
  size_t width = 46;
  for (const Estimate& e : best) width = std::max(width, plan::toString(e.layout).size());
  return static_cast<int>(width);
}

void printRow(std::ostream& out, int rank, const Estimate& e, int width) {
  char line[320];
  std::snprintf(line, sizeof line, "%3d  %-*s %10.2f %11.0f %8.1f %6.1f%% %9.1f %9.1f\n", rank,
                width, plan::toString(e.layout).c_str(), e.samplesPerSecond, e.tokensPerSecond,
                e.modelFlopsPerDevice / 1e12, 100 * e.mfu, gib(e.memory.total()), e.daysToTrain);
  out << line;
}

// Where a layout's experts live and who averages them.
void printExpertParallel(std::ostream& out, const plan::Layout& l, const plan::ModelDesc& m) {
  out << "  expert parallel: ep " << l.ep << ", each rank holding " << m.moe.experts / l.ep
      << " of the " << m.moe.experts << " experts of each of the " << plan::moeLayerCount(m)
      << " MoE layers and trading tokens with them by all-to-all; experts' gradients averaged "
         "over dp x cp / ep = "
      << l.expertReplicas() << " ranks\n";
}

// How the pipeline's stages sit on its ranks and how many hand-offs cross
// between them a step.
void printPipeline(std::ostream& out, const plan::Layout& l, const Estimate& e) {
  int stages = plan::pipelineStages(l);
  out << "  pipeline: " << stages << (stages == 1 ? " stage" : " stages");
  if (plan::isVSchedule(l))
    out << " in a V on pp " << l.pp << " ranks (rank 0 runs the first and the last)";
  else if (l.virtualStages > 1)
    out << ", " << l.virtualStages << " per rank round-robin";
  out << "; " << e.pipelineMessages << " hand-offs between ranks a step\n";
}

// "0, 15": the stages a pipeline rank runs.
std::string stagesText(const std::vector<int>& stageRanks, int rank) {
  std::string text;
  for (size_t s = 0; s < stageRanks.size(); ++s)
    if (stageRanks[s] == rank) text += (text.empty() ? "" : ", ") + std::to_string(s);
  return text;
}

// Each pipeline rank's memory: the ranks differ (the embedding's, the
// head's with its logits, the first stages' deeper stash), and the device
// that runs out is the heaviest's, not the average's.
void printRankMemory(std::ostream& out, const Estimate& e) {
  std::vector<int> stageRanks = plan::stageRanks(e.layout);
  out << "  memory per pipeline rank, GiB (the heaviest is the one that runs out):\n"
      << "    rank  stages      parameters  gradients  optimizer  activations  buffers  stash    "
         "total\n";
  for (size_t r = 0; r < e.rankMemory.size(); ++r) {
    const plan::MemoryBreakdown& m = e.rankMemory[r];
    char line[200];
    std::snprintf(
        line, sizeof line, "    %4zu  %-10s %11.2f %10.2f %10.2f %12.2f %8.2f %6d %8.2f%s\n", r,
        stagesText(stageRanks, static_cast<int>(r)).c_str(), gib(m.parameters), gib(m.gradients),
        gib(m.optimizer), gib(m.activations), gib(m.buffers), e.rankStash[r], gib(m.total()),
        m.total() == e.memory.total() ? "  <- heaviest" : "");
    out << line;
  }
}

void printExplain(std::ostream& out, const Estimate& e, const plan::TrainingJob& job) {
  const plan::TimeBreakdown& t = e.time;
  auto part = [&](const char* name, double s) {
    out << "    " << name << fmt("%10.3f s", s)
        << fmt("  (%5.1f%%)\n", 100 * s / e.iterationSeconds);
  };
  out << "\nwhy " << plan::toString(e.layout) << ": one iteration of " << e.microBatches
      << " micro-batches takes " << fmt("%.3f s", e.iterationSeconds)
      << " on the busiest pipeline rank:\n";
  part("compute            ", t.compute);
  part("recompute          ", t.recompute);
  part("pipeline bubble    ", t.bubble);
  if (t.ppComm > 0) part("pp hand-offs (sent)", t.ppComm);
  part("tp communication   ", t.tpComm);
  if (e.layout.cp > 1) part("cp communication   ", t.cpComm);
  if (e.layout.ep > 1) part("ep communication   ", t.epComm);
  part("dp comm (exposed)  ", t.dpExposed);
  part("optimizer step     ", t.optimizer);
  out << "  memory per device: parameters " << fmt("%.2f", gib(e.memory.parameters))
      << " GiB, gradients " << fmt("%.2f", gib(e.memory.gradients)) << " GiB, optimizer "
      << fmt("%.2f", gib(e.memory.optimizer)) << " GiB, activations "
      << fmt("%.2f", gib(e.memory.activations)) << " GiB (peak stash " << e.peakStash
      << " stage-micro-batches), buffers " << fmt("%.2f", gib(e.memory.buffers)) << " GiB; total "
      << fmt("%.2f", gib(e.memory.total())) << " of "
      << fmt("%.0f", gib(job.cluster.device.memoryBytes)) << " GiB"
      << (e.fitsMemory ? "" : "  -- DOES NOT FIT") << "\n";
  if (e.layout.pp > 1) printRankMemory(out, e);
  if (e.layout.pp > 1) printPipeline(out, e.layout, e);
  if (e.layout.cp > 1)
    out << "  context parallel: cp " << e.layout.cp << " by "
        << plan::cpAlgorithmName(e.layout.cpAlgorithm) << " attention, each rank holding "
        << job.model.seqLen / e.layout.cp << " of every sequence's " << job.model.seqLen
        << " tokens; gradients averaged over dp " << e.layout.dp << " x cp " << e.layout.cp << "\n";
  if (e.layout.ep > 1) printExpertParallel(out, e.layout, job.model);
  out << "  hardware FLOP/s per device (counting recompute): "
      << fmt("%.1f TFLOP/s\n", e.hardwareFlopsPerDevice / 1e12);
}

void printReport(std::ostream& out, const PlanOptions& o, const plan::TrainingJob& job,
                 const std::vector<Estimate>& best, const std::string& header) {
  if (o.json) {
    for (size_t i = 0; i < best.size(); ++i) printJson(out, static_cast<int>(i) + 1, best[i], job);
    return;
  }
  out << header;
  int width = layoutWidth(best);
  char columns[320];
  std::snprintf(columns, sizeof columns,
                "%3s  %-*s  samples/s    tokens/s  TFLOP/s    MFU  mem GiB      days\n", "#", width,
                "layout");
  out << columns;
  for (size_t i = 0; i < best.size(); ++i) printRow(out, static_cast<int>(i) + 1, best[i], width);
  if (o.explain && !best.empty()) printExplain(out, best.front(), job);
  if (!best.empty()) printFailures(out, job, best.front(), static_cast<int>(o.simulateFailures));
}

// "124.4M", "1.3B": a parameter count in the unit that suits it.
std::string parameterText(double count) {
  if (count >= 1e9) return fmt("%.1fB", count / 1e9);
  if (count >= 1e6) return fmt("%.1fM", count / 1e6);
  return fmt("%.1fK", count / 1e3);
}

// ", 8 experts of ffn 14336, top 2, 1 shared, MoE every 2 layers": an MoE
// model's experts, the shared ones and `every` only when they are set.
std::string moeText(const plan::MoeDesc& moe) {
  std::ostringstream s;
  s << ", " << moe.experts << " experts of ffn " << moe.expertFfn << ", top " << moe.topK;
  if (moe.sharedExperts > 0) s << ", " << moe.sharedExperts << " shared";
  if (moe.every > 1) s << ", MoE every " << moe.every << " layers";
  return s.str();
}

// "llama, 32 layers, hidden 4096, 32 heads, 8 kv heads, ffn 14336": a GPT
// names neither its family nor its kv heads, as before llama.
std::string shapeText(const plan::ModelDesc& m) {
  bool llama = m.family == plan::Family::kLlama;
  std::ostringstream s;
  if (llama) s << "llama, ";
  s << m.layers << " layers, hidden " << m.hidden << ", " << m.heads << " heads, ";
  if (llama) s << m.keyValueHeads() << " kv heads, ";
  s << "ffn " << m.ffn;
  if (m.moe.enabled()) s << moeText(m.moe);
  s << ", vocab " << m.vocab << ", seq " << m.seqLen;
  return s.str();
}

// "46.7B parameters, 12.9B active" for an MoE model, "8.0B parameters" otherwise.
std::string countText(const plan::ModelDesc& m) {
  std::string text = parameterText(plan::parameterCount(m)) + " parameters";
  if (m.moe.enabled()) text += ", " + parameterText(plan::activeParameterCount(m)) + " active";
  return text;
}

std::string describe(const plan::TrainingJob& job) {
  const plan::ModelDesc& m = job.model;
  std::ostringstream s;
  s << "strata plan: " << m.name << " (" << countText(m) << ": " << shapeText(m) << ") on "
    << job.cluster.nodes << " x " << job.cluster.name << " (" << job.cluster.totalDevices() << " x "
    << job.cluster.device.name << "), global batch " << job.globalBatch << "\n";
  if (m.lora.enabled) {
    std::vector<std::string> names = plan::loraTargetNames();
    std::string targets;
    for (plan::LoraTarget t : m.lora.targets)
      targets += (targets.empty() ? "" : ", ") + names[static_cast<size_t>(t)];
    s << "LoRA: rank " << m.lora.rank << " adapters on " << targets << ", "
      << parameterText(plan::loraParameters(m))
      << " parameters trained; the base frozen (its weights alone: no gradients or optimizer "
         "state)\n";
  }
  return s.str();
}

int run(const PlanOptions& o, bool modelGiven, const ConfigModelReader& initFromModel,
        std::ostream& out) {
  if (o.simulateFailures > 0 && o.tokens <= 0)
    throw plan::PlanError(
        "--simulate-failures needs --tokens: the runs it simulates train on them");
  PlannedJob planned = makePlannedJob(requestOf(o, modelGiven, initFromModel));
  const plan::TrainingJob& job = planned.job;
  if (!o.layout.empty()) {
    Estimate e = plan::evaluateLayout(job, fixedLayout(o, planned));
    printReport(out, o, job, {e}, describe(job));
    return 0;
  }
  plan::SearchOptions options;
  options.top = static_cast<int>(o.top);
  if (o.maxCp > 0) options.maxContextParallel = static_cast<int>(o.maxCp);
  if (o.maxEp > 0) options.maxExpertParallel = static_cast<int>(o.maxEp);
  plan::SearchResult result = plan::searchLayouts(job, options);
  std::string header = describe(job) + std::to_string(result.considered) + " layouts considered, " +
                       std::to_string(result.valid) + " valid, " + std::to_string(result.fitting) +
                       " fit in memory\n";
  printReport(out, o, job, result.best, header);
  return 0;
}

}  // namespace

Subcommand addPlanCommand(CLI::App& strata, std::ostream& out, std::ostream& err,
                          ConfigModelReader initFromModel) {
  CLI::App* command = strata.add_subcommand(
      "plan", "choose a parallel layout for a model on a cluster and predict time to train");
  command->footer(
      "Chooses the parallel layout (pp x tp x cp x dp, ep, schedule, micro-batch, ZeRO,\n"
      "recompute) of a GPT or Llama model on a cluster and predicts its throughput, memory per\n"
      "device and days to train. cp (context parallelism) splits every sequence over cp ranks,\n"
      "for sequences too long for one device's memory; ep (expert parallelism) spreads a\n"
      "mixture-of-experts model's experts over ep of the dp x cp ranks.\n"
      "The model is --model's preset, --config's (a strata train config: its [model],\n"
      "train.seq_len, global batch and precision; --layout config predicts its [parallel]\n"
      "layout and micro-batch) or --profile's. --layers, --hidden, --heads, --ffn, --vocab and\n"
      "--seq-len replace its sizes; all six without --model, --config or --profile describe\n"
      "a custom model. --architecture and --kv-heads replace its family and key/value heads,\n"
      "--moe-experts, --moe-top-k, --moe-expert-ffn, --moe-shared-experts and --moe-every its\n"
      "mixture-of-experts layers.\n"
      "With --tokens and a failure rate (the cluster's, or --failures-per-gpu-hour), the best\n"
      "layout's time to train with failures: the checkpoint interval that loses the least\n"
      "(Young/Daly), the goodput and days with checkpoint-restart and with in-job recovery,\n"
      "and with --simulate-failures RUNS the spread of whole runs (docs/planner.md).");
  auto options = std::make_shared<PlanOptions>();
  addFlags(*command, *options);
  return {command, [command, options, initFromModel, &out, &err] {
            try {
              return run(*options, command->count("--model") > 0, initFromModel, out);
            } catch (const Error& e) {
              // PlanError, ScheduleError and the rest of strata::Error: all bad input.
              err << "strata plan: " << e.what() << "\n";
              return 2;
            }
          }};
}

}  // namespace strata

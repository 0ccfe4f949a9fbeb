#include "plan_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "strata/plan/errors.h"
#include "strata/plan/measured_profile.h"
#include "strata/plan/search.h"
#include "strata/schedule/error.h"
#include "strata/util/cli_flags.h"
#include "strata/util/json.h"

namespace strata {
namespace {

using plan::Estimate;

struct PlanOptions {
  std::string model = "gpt2-small", cluster = "cpu-local", clusterFile, profile, layout;
  int64_t nodes = 0, globalBatch = 8, seqLen = 0, top = 5;
  double tokens = 0, efficiency = 0;
  bool explain = false, json = false, allowCrossNodeTp = false, evenStages = false;
};

void addFlags(CLI::App& command, PlanOptions& o) {
  auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  addTextFlag(command, "--model", &o.model, "model preset: " + list(plan::modelPresetNames()));
  addTextFlag(command, "--profile", &o.profile,
              "measured profile file (model and per-layer times, e.g. written by "
              "bench_planner_calibration); replaces --model and FLOP-based compute");
  addTextFlag(command, "--cluster", &o.cluster,
              "cluster preset: " + list(plan::clusterPresetNames()));
  addTextFlag(command, "--cluster-file", &o.clusterFile,
              "cluster description file (overrides --cluster)");
  addIntFlag(command, "--nodes", &o.nodes, "nodes to use (0: the cluster's own count)", 0);
  addIntFlag(command, "--global-batch", &o.globalBatch, "sequences per iteration", 1);
  addIntFlag(command, "--seq-len", &o.seqLen, "sequence length (0: the model preset's)", 0);
  addRealFlag(command, "--tokens", &o.tokens, "tokens to train on, for days to train (e.g. 300e9)");
  addIntFlag(command, "--top", &o.top, "layouts to print", 1);
  addTextFlag(command, "--layout", &o.layout,
              "predict this one layout, e.g. pp8,tp8,dp24,mb1,1f1b,zero1,recompute,sp "
              "(dp defaults to what the devices leave)");
  addRealFlag(command, "--efficiency", &o.efficiency,
              "achieved fraction of peak FLOP/s (0: the cluster's calibrated value)");
  addSwitch(command, "allow-cross-node-tp", &o.allowCrossNodeTp, "let tp groups span nodes");
  addSwitch(command, "even-stages", &o.evenStages,
            "require layers to divide by pp x v (otherwise stages are cut by the balanced "
            "partitioner)");
  addSwitch(command, "explain", &o.explain, "show where the best layout's time and memory go");
  addSwitch(command, "json", &o.json, "print one JSON object per layout instead of a table");
}

plan::TrainingJob makeJob(const PlanOptions& o) {
  plan::TrainingJob job;
  if (o.profile.empty()) {
    job.model = plan::modelPreset(o.model);
  } else {
    job.profile = plan::loadProfileFile(o.profile);
    job.model = job.profile->model;
    job.dtype = job.profile->dtype;
    job.precision = plan::precisionOf(*job.profile);
  }
  if (o.seqLen > 0) job.model.seqLen = static_cast<int>(o.seqLen);
  job.cluster =
      o.clusterFile.empty() ? plan::clusterPreset(o.cluster) : plan::loadClusterFile(o.clusterFile);
  if (o.nodes > 0) job.cluster.nodes = static_cast<int>(o.nodes);
  if (o.efficiency < 0 || o.efficiency > 1)
    throw plan::PlanError("--efficiency is a fraction of peak in (0, 1], got " +
                          std::to_string(o.efficiency));
  if (o.efficiency > 0) job.cluster.device.matmulEfficiency = o.efficiency;
  job.globalBatch = static_cast<int>(o.globalBatch);
  job.tokens = o.tokens;
  job.allowCrossNodeTp = o.allowCrossNodeTp;
  job.evenStages = o.evenStages;
  return job;
}

plan::Layout fixedLayout(const PlanOptions& o, const plan::TrainingJob& job) {
  plan::Layout layout = plan::parseLayout(o.layout);
  bool dpGiven = ("," + o.layout).find(",dp") != std::string::npos;
  if (!dpGiven) layout.dp = std::max(1, job.cluster.totalDevices() / (layout.pp * layout.tp));
  return layout;
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

void printJson(std::ostream& out, int rank, const Estimate& e) {
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
      {"dp_exposed_s", jsonNumber(e.time.dpExposed)},
      {"optimizer_s", jsonNumber(e.time.optimizer)}};
  out << dumpJson(line) << "\n";
}

void printRow(std::ostream& out, int rank, const Estimate& e) {
  char line[256];
  std::snprintf(line, sizeof line, "%3d  %-46s %10.2f %11.0f %8.1f %6.1f%% %9.1f %9.1f\n", rank,
                plan::toString(e.layout).c_str(), e.samplesPerSecond, e.tokensPerSecond,
                e.modelFlopsPerDevice / 1e12, 100 * e.mfu, gib(e.memory.total()), e.daysToTrain);
  out << line;
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
  part("tp communication   ", t.tpComm);
  part("dp comm (exposed)  ", t.dpExposed);
  part("optimizer step     ", t.optimizer);
  out << "  memory per device: parameters " << fmt("%.2f", gib(e.memory.parameters))
      << " GiB, gradients " << fmt("%.2f", gib(e.memory.gradients)) << " GiB, optimizer "
      << fmt("%.2f", gib(e.memory.optimizer)) << " GiB, activations "
      << fmt("%.2f", gib(e.memory.activations)) << " GiB (peak stash " << e.peakStash
      << " stage-micro-batches); total " << fmt("%.2f", gib(e.memory.total())) << " of "
      << fmt("%.0f", gib(job.cluster.device.memoryBytes)) << " GiB"
      << (e.fitsMemory ? "" : "  -- DOES NOT FIT") << "\n";
  out << "  hardware FLOP/s per device (counting recompute): "
      << fmt("%.1f TFLOP/s\n", e.hardwareFlopsPerDevice / 1e12);
}

void printReport(std::ostream& out, const PlanOptions& o, const plan::TrainingJob& job,
                 const std::vector<Estimate>& best, const std::string& header) {
  if (o.json) {
    for (size_t i = 0; i < best.size(); ++i) printJson(out, static_cast<int>(i) + 1, best[i]);
    return;
  }
  out << header;
  out << "  #  layout                                          samples/s    tokens/s  TFLOP/s"
         "    MFU  mem GiB      days\n";
  for (size_t i = 0; i < best.size(); ++i) printRow(out, static_cast<int>(i) + 1, best[i]);
  if (o.explain && !best.empty()) printExplain(out, best.front(), job);
}

std::string describe(const plan::TrainingJob& job) {
  std::ostringstream s;
  s << "strata plan: " << job.model.name << " ("
    << fmt("%.1fB", plan::parameterCount(job.model) / 1e9) << " parameters, seq "
    << job.model.seqLen << ") on " << job.cluster.nodes << " x " << job.cluster.name << " ("
    << job.cluster.totalDevices() << " x " << job.cluster.device.name << "), global batch "
    << job.globalBatch << "\n";
  return s.str();
}

int run(const PlanOptions& o, std::ostream& out) {
  plan::TrainingJob job = makeJob(o);
  if (!o.layout.empty()) {
    Estimate e = plan::evaluateLayout(job, fixedLayout(o, job));
    printReport(out, o, job, {e}, describe(job));
    return 0;
  }
  plan::SearchOptions options;
  options.top = static_cast<int>(o.top);
  plan::SearchResult result = plan::searchLayouts(job, options);
  std::string header = describe(job) + std::to_string(result.considered) + " layouts considered, " +
                       std::to_string(result.valid) + " valid, " + std::to_string(result.fitting) +
                       " fit in memory\n";
  printReport(out, o, job, result.best, header);
  return 0;
}

}  // namespace

Subcommand addPlanCommand(CLI::App& strata, std::ostream& out, std::ostream& err) {
  CLI::App* command = strata.add_subcommand(
      "plan", "choose a parallel layout for a model on a cluster and predict time to train");
  command->footer(
      "Chooses the parallel layout (pp x tp x dp, schedule, micro-batch, ZeRO, recompute) of a\n"
      "GPT model on a cluster and predicts its throughput, memory per device and days to train.");
  auto options = std::make_shared<PlanOptions>();
  addFlags(*command, *options);
  return {command, [options, &out, &err] {
            try {
              return run(*options, out);
            } catch (const Error& e) {
              // PlanError, ScheduleError and the rest of strata::Error: all bad input.
              err << "strata plan: " << e.what() << "\n";
              return 2;
            }
          }};
}

}  // namespace strata

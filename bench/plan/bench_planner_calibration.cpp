// Planner calibration on this machine: the planner's predicted step time
// against the measured one for eight layouts of a GPT that `strata train`
// runs (1 process; dp2; tp2; pp2 with GPipe, 1F1B and ZB-H1; cp2 with ring
// and with all-to-all attention), at most two processes because this
// machine has two cores.
//
// One set of machine constants, measured in this same run, feeds every
// prediction; nothing is fitted per layout:
//  - a measured profile (measured_profile.h): the GPT's per-layer forward and
//    backward seconds at the micro-batch shape on one thread, scaled to the
//    whole micro-batch timed in the same task (calibration_model.h's
//    chainedFactor: chained, layers take longer than alone), one block's
//    seconds as a shard of a tp = 2 group (timed over a communicator that
//    moves nothing, so only the shard's compute shows), and the
//    slowdown of the GPT's micro-batch when both cores run it at once against
//    one process alone (shared vector units, caches and memory bandwidth,
//    and the other jobs' load on this machine all show in it);
//  - this machine as a cluster file: all-reduce beta from a 1 KiB and a 4 MiB
//    message (p = 2 ring: t = n/beta + 2 alpha), alpha from tensor
//    parallelism's all-reduce right after a transformer block (timed from
//    the last rank's arrival, so without the wait), the compute
//    noise (the wait of an all-reduce for the rank behind, fitted to the
//    waits after one and after four transformer blocks on both ranks; see
//    plan/comm.h's syncWaitSeconds), and the optimizer's streaming rate
//    (AdamW + clipping over the model's parameters, as the planner's 32 bytes
//    per parameter).
// Both files are written to planner_calibration/ next to this binary, so
// `strata plan --profile ... --cluster-file ...` can reuse them. Each layout
// then trains for 2 warm-up and 5 timed steps in re-executed rank processes.
// This machine is shared with other jobs whose load comes and goes, so every
// measurement (profile, probes, training) runs in three interleaved rounds and
// keeps its median (see calibration_tasks.h for why not the fastest).
// Prints, per layout, one line
//   {"bench":"planner_calibration","layout":...,"predicted_s":...,"measured_s":...,"error":...}
// with error = predicted / measured - 1.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "calibration_model.h"
#include "calibration_tasks.h"
#include "strata/plan/cost_model.h"
#include "strata/util/json.h"
#include "strata/util/subprocess.h"

namespace {

using namespace strata;
using bench::Values;

struct CalibrationLayout {
  int pp, dp, tp;
  const char* schedule;
  int cp = 1;
  plan::CpAlgorithm cpAlgorithm = plan::CpAlgorithm::kRing;
  int processes() const { return pp * dp * cp * tp; }
};

// Each measurement is repeated in this many rounds, interleaved, and the
// median kept.
constexpr int kRounds = 3;

const CalibrationLayout kLayouts[] = {
    {1, 1, 1, "1f1b"},
    {1, 2, 1, "1f1b"},
    {1, 1, 2, "1f1b"},
    {2, 1, 1, "gpipe"},
    {2, 1, 1, "1f1b"},
    {2, 1, 1, "zb-h1"},
    {1, 1, 1, "1f1b", 2, plan::CpAlgorithm::kRing},
    {1, 1, 1, "1f1b", 2, plan::CpAlgorithm::kAllToAll},
};

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

// This machine as a cluster file (calibration_model.h's fitLink and
// fitPointToPointLink for the links).
std::string clusterText(const Values& profile, const Values& machine) {
  bench::FittedLink link = bench::fitLink(machine);
  bench::FittedLink p2p = bench::fitPointToPointLink(machine);
  plan::ComputeNoise noise = bench::fitNoise(machine);
  std::ostringstream out;
  out << "# this machine, measured by bench_planner_calibration\n"
      << "name = \"cpu-local-measured\"\nnodes = 1\ndevices_per_node = 2\n"
      << "# AdamW + clipping, as the planner's 32 bytes per parameter\n"
      << "memory_bandwidth_gbytes_per_s = " << bench::optimizerBytesPerSecond(profile) / 1e9 << "\n"
      << "# all-reduce, p = 2: t = n / beta + 2 alpha; alpha right after compute\n"
      << bench::linkKeys("intra_node_", link) << bench::linkKeys("inter_node_", link)
      << "# send and receive, one way: t = n / beta + alpha, idle\n"
      << bench::linkKeys("intra_node_p2p_", p2p) << bench::linkKeys("inter_node_p2p_", p2p)
      << "# the wait of a collective for the member behind (cluster.h's ComputeNoise)\n"
      << "compute_spread = " << noise.spread << "\n"
      << "compute_jitter_ms = " << noise.jitter * 1e3 << "\n";
  return out.str();
}

// The job of one layout: the measured machine, but only as many of its
// devices as the layout uses (one process leaves the other core idle).
plan::TrainingJob layoutJob(plan::TrainingJob job, const CalibrationLayout& c) {
  job.cluster.devicesPerNode = c.processes();
  return job;
}

plan::Layout planLayout(const CalibrationLayout& c) {
  plan::Layout l;
  l.pp = c.pp;
  l.dp = c.dp;
  l.tp = c.tp;
  l.cp = c.cp;
  l.cpAlgorithm = c.cpAlgorithm;
  l.microBatch = static_cast<int>(bench::calibrationConfig(1, 1, 1, "1f1b").train.microBatch);
  l.schedule = c.schedule;
  return l;
}

void describeEstimate(const plan::Estimate& e, double measured) {
  const plan::TimeBreakdown& t = e.time;
  std::cerr << plan::toString(e.layout) << ": measured " << fixed(measured, 3) << " s, predicted "
            << fixed(e.iterationSeconds, 3) << " s = compute " << fixed(t.compute, 3)
            << " + recompute " << fixed(t.recompute, 3) << " + tp comm " << fixed(t.tpComm, 3)
            << " + bubble " << fixed(t.bubble, 3) << " + dp exposed " << fixed(t.dpExposed, 3)
            << " + optimizer " << fixed(t.optimizer, 3) << "\n";
}

// All measurements, repeated in kRounds interleaved rounds.
struct Measurements {
  Values profile, machine;
  std::vector<Values> steps;  // per layout
};

Measurements measureAll(char** argv, const std::string& dir) {
  std::vector<Values> profiles, machines;
  std::vector<std::vector<Values>> steps(std::size(kLayouts));
  for (int round = 0; round < kRounds; ++round) {
    profiles.push_back(bench::runTask(argv, dir, "profile", 1));
    machines.push_back(bench::runTask(argv, dir, "machine", 2));
    for (size_t i = 0; i < std::size(kLayouts); ++i) {
      const CalibrationLayout& c = kLayouts[i];
      std::string spec = std::to_string(c.pp) + "," + std::to_string(c.dp) + "," +
                         std::to_string(c.tp) + "," + c.schedule + "," + std::to_string(c.cp) +
                         "," + plan::cpAlgorithmName(c.cpAlgorithm);
      steps[i].push_back(bench::runTask(argv, dir, "train", c.processes(), spec));
    }
  }
  Measurements m{bench::medianOverRounds(profiles), bench::medianOverRounds(machines), {}};
  for (const std::vector<Values>& layout : steps)
    m.steps.push_back(bench::medianOverRounds(layout));
  return m;
}

plan::TrainingJob measuredJob(const std::string& dir, const Measurements& m) {
  // The slowdown of the GPT's micro-batch when both cores run it at once
  // against one process alone: shared vector units, caches and memory
  // bandwidth, and the other jobs' load on this machine all show in it.
  double slowdown = m.machine.at("microbatch_together_s") / m.profile.at("microbatch_alone_s");
  bench::writeFile(dir + "/gpt.profile",
                   plan::formatProfile(bench::makeProfile(m.profile, slowdown)));
  bench::writeFile(dir + "/cpu-local.cluster", clusterText(m.profile, m.machine));
  std::cerr << "wrote " << dir << "/gpt.profile and " << dir
            << "/cpu-local.cluster (layers chained x "
            << bench::chainedFactor(m.profile,
                                    bench::calibrationConfig(1, 1, 1, "1f1b").model.layers)
            << ")\n";
  for (const auto& [key, value] : m.machine)
    std::cerr << "machine " << key << " = " << value << "\n";
  return bench::jobFromFiles(
      dir + "/gpt.profile", dir + "/cpu-local.cluster",
      static_cast<int>(bench::calibrationConfig(1, 1, 1, "1f1b").train.globalBatch));
}

int runParent(char** argv) {
  std::string dir =
      std::filesystem::path(currentExecutable()).parent_path().string() + "/planner_calibration";
  std::filesystem::create_directories(dir);
  Measurements m = measureAll(argv, dir);
  plan::TrainingJob job = measuredJob(dir, m);
  for (size_t i = 0; i < std::size(kLayouts); ++i) {
    double measured = m.steps[i].at("step_s");
    plan::Estimate e = plan::evaluateLayout(layoutJob(job, kLayouts[i]), planLayout(kLayouts[i]));
    describeEstimate(e, measured);
    bench::emitJson({{"bench", "planner_calibration"},
                     {"layout", plan::toString(e.layout)},
                     {"predicted_s", jsonNumber(e.iterationSeconds)},
                     {"measured_s", jsonNumber(measured)},
                     {"error", jsonNumber(e.iterationSeconds / measured - 1)}});
  }
  return 0;
}

}  // namespace

int main(int, char** argv) {
  return strata::bench::calibrationMain("bench_planner_calibration", argv, runParent);
}

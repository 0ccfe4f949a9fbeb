// What the link between nodes costs, measured and predicted.
//
// Two nodes of two workers each, rehearsed on this machine
// (tests/support/rehearsal_cluster.h): network namespaces joined by a
// bridge, the link shaped to kLinkGbps with tc's token bucket, the workers of
// a node sharing memory. The GPT of calibrationConfig trains as pp2 x tp2 in
// two placements:
//  - tp-inner (Strata's rank order): each node holds one pipeline stage with
//    its tp pair; only the activations at the stage boundary cross the link;
//  - pp-inner: each node holds one tp slice of both stages; every tp
//    all-reduce crosses the link.
// The planner predicts both from constants measured in this same run, as
// bench_planner_calibration does (nothing fitted per layout): the GPT's
// per-layer times on one process; the slowdown of four workers sharing the
// two cores (the "crowd" task: the micro-batch on all four at once against
// one alone); each link's bandwidth from all-reduces of two sizes between the
// two workers of a node, or between the nodes, on the otherwise idle
// machine; and each link's per-message cost from what an all-reduce adds to
// a transformer block's forward while all four workers compute (the crowd
// task again), which carries the wait for a paired worker less the time its
// core went to the others. Both files go to placement/ next to this binary,
// so `strata plan --profile bench/placement/gpt.profile --cluster-file
// bench/placement/rehearsal.cluster --global-batch 16 --layout
// pp2,tp2,mb2,1f1b[,pp-inner] --allow-cross-node-tp` repeats a prediction.
// Every measurement runs in kRounds interleaved rounds and keeps its median
// (this machine is shared; see calibration_tasks.h).
//
// Prints, per placement,
//   {"bench":"placement","layout":...,"link_gbps":...,"measured_s":...,"predicted_s":...,"error":...}
// and then {"bench":"placement_ranking",...}: which placement was faster,
// which the planner predicts faster, and what its search recommends for
// pp2 x tp2 on these nodes. Without root and network namespaces it prints
// why and {"bench":"placement","skipped":...}.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_ranks.h"
#include "calibration_model.h"
#include "calibration_tasks.h"
#include "rehearsal_cluster.h"
#include "strata/plan/cluster.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/search.h"
#include "strata/util/json.h"
#include "strata/util/subprocess.h"

namespace {

using namespace strata;
using bench::RankSite;
using bench::Values;
using testing::RehearsalCluster;

constexpr double kLinkGbps = 1.0;
constexpr int kRounds = 3;
constexpr int kWorkersPerNode = 2;
const char kLayoutArgument[] = "2,1,2,1f1b,1,ring";  // pp, dp, tp, schedule, cp, cp algorithm

struct Placement {
  const char* layout;       // the planner's text form
  int (*nodeOf)(int rank);  // where each rank runs
};

// tp varies fastest in Strata's rank order: ranks 0, 1 are stage 0's tp pair.
const Placement kPlacements[] = {
    {"pp2,tp2,mb2,1f1b", [](int rank) { return rank / kWorkersPerNode; }},
    {"pp2,tp2,mb2,1f1b,pp-inner", [](int rank) { return rank % kWorkersPerNode; }},
};

// Runs rank r on node nodeOf(r), rendezvous at node 0.
bench::RankSites sitesOn(const RehearsalCluster& cluster, std::function<int(int)> nodeOf) {
  return [&cluster, nodeOf](int rank) {
    int node = nodeOf(rank);
    int localRank = 0;
    for (int r = 0; r < rank; ++r) localRank += nodeOf(r) == node ? 1 : 0;
    RankSite site;
    site.prefix = cluster.commandPrefix(node);
    site.env = {{"MASTER_ADDR", cluster.address(0)},
                {"LOCAL_RANK", std::to_string(localRank)},
                {"LOCAL_WORLD_SIZE", std::to_string(kWorkersPerNode)}};
    return site;
  };
}

struct Measurements {
  Values profile, intraNode, interNode, crowd;
  std::vector<Values> steps;  // per placement
};

Measurements measure(char** argv, const std::string& dir, const RehearsalCluster& cluster) {
  std::vector<Values> profiles, intra, inter, crowds;
  std::vector<std::vector<Values>> steps(std::size(kPlacements));
  for (int round = 0; round < kRounds; ++round) {
    std::cerr << "bench_placement: round " << round + 1 << " of " << kRounds << "\n";
    profiles.push_back(bench::runTask(argv, dir, "profile", 1));
    intra.push_back(
        bench::runTask(argv, dir, "machine", 2, "", sitesOn(cluster, [](int) { return 0; })));
    inter.push_back(
        bench::runTask(argv, dir, "machine", 2, "", sitesOn(cluster, [](int r) { return r; })));
    crowds.push_back(
        bench::runTask(argv, dir, "crowd", 4, "", sitesOn(cluster, kPlacements[0].nodeOf)));
    for (size_t i = 0; i < std::size(kPlacements); ++i) {
      steps[i].push_back(bench::runTask(argv, dir, "train", 4, kLayoutArgument,
                                        sitesOn(cluster, kPlacements[i].nodeOf)));
    }
  }
  Measurements m{bench::medianOverRounds(profiles),
                 bench::medianOverRounds(intra),
                 bench::medianOverRounds(inter),
                 bench::medianOverRounds(crowds),
                 {}};
  for (const std::vector<Values>& placement : steps)
    m.steps.push_back(bench::medianOverRounds(placement));
  return m;
}

std::string clusterText(const Measurements& m) {
  // Beta from each link's idle probes; alpha from what an all-reduce adds to
  // a block's forward while all four workers compute, as training crowds
  // the machine (the wait for the paired worker included: the crowd task
  // says why it is not the compute noise's here).
  double bytes = m.crowd.at("crowd_bytes");
  auto added = [&](const std::string& link) {
    return m.crowd.at("block_allreduce_crowd_" + link + "_s") - m.crowd.at("block_crowd_s");
  };
  bench::FittedLink intra = bench::fitLink(m.intraNode, added("intra"), bytes);
  bench::FittedLink inter = bench::fitLink(m.interNode, added("inter"), bytes);
  std::ostringstream out;
  out << "# two rehearsed nodes of two workers, the link shaped to " << kLinkGbps
      << " Gbit/s; measured by bench_placement\n"
      << "name = \"rehearsal\"\nnodes = 2\ndevices_per_node = " << kWorkersPerNode << "\n"
      << "memory_bandwidth_gbytes_per_s = " << bench::optimizerBytesPerSecond(m.profile) / 1e9
      << "\n"
      << "# all-reduce, p = 2: t = n / beta + 2 alpha (alpha under training load)\n"
      << bench::linkKeys("intra_node_", intra) << bench::linkKeys("inter_node_", inter)
      << "# send and receive, one way: t = n / beta + alpha, idle\n"
      << bench::linkKeys("intra_node_p2p_", bench::fitPointToPointLink(m.intraNode))
      << bench::linkKeys("inter_node_p2p_", bench::fitPointToPointLink(m.interNode));
  return out.str();
}

plan::TrainingJob plannedJob(const std::string& dir, const Measurements& m) {
  double slowdown = m.crowd.at("microbatch_crowd_s") / m.profile.at("microbatch_alone_s");
  bench::writeFile(dir + "/gpt.profile",
                   plan::formatProfile(bench::makeProfile(m.profile, slowdown)));
  bench::writeFile(dir + "/rehearsal.cluster", clusterText(m));
  plan::TrainingJob job = bench::jobFromFiles(
      dir + "/gpt.profile", dir + "/rehearsal.cluster",
      static_cast<int>(bench::calibrationConfig(2, 1, 2, "1f1b").train.globalBatch));
  job.allowCrossNodeTp = true;
  std::cerr << "bench_placement: wrote " << dir << "/gpt.profile and " << dir
            << "/rehearsal.cluster (four workers on two cores: compute x " << slowdown << ")\n";
  return job;
}

// The planner's own choice between the placements of pp2 x tp2.
std::string recommendedPlacement(const plan::TrainingJob& job) {
  plan::SearchOptions options;
  options.top = 1000;
  options.schedules = {"1f1b"};
  options.microBatchSizes = {2};
  options.zeroStages = {0};
  options.recompute = {false};
  for (const plan::Estimate& e : plan::searchLayouts(job, options).best) {
    if (e.layout.pp == 2 && e.layout.tp == 2) return plan::toString(e.layout);
  }
  return "none";
}

int runParent(char** argv) {
  std::string why = RehearsalCluster::unavailableReason();
  if (!why.empty()) {
    std::cerr << "bench_placement: skipped: " << why << "\n";
    bench::emitJson({{"bench", "placement"}, {"skipped", why}});
    return 0;
  }
  std::string dir =
      std::filesystem::path(currentExecutable()).parent_path().string() + "/placement";
  std::filesystem::create_directories(dir);
  testing::RehearsalOptions options;
  options.linkGbitPerSecond = kLinkGbps;
  RehearsalCluster cluster(options);
  Measurements m = measure(argv, dir, cluster);
  plan::TrainingJob job = plannedJob(dir, m);
  std::vector<double> measured, predicted;
  for (size_t i = 0; i < std::size(kPlacements); ++i) {
    plan::Estimate e = plan::evaluateLayout(job, plan::parseLayout(kPlacements[i].layout));
    measured.push_back(m.steps[i].at("step_s"));
    predicted.push_back(e.iterationSeconds);
    bench::emitJson({{"bench", "placement"},
                     {"layout", plan::toString(e.layout)},
                     {"link_gbps", kLinkGbps},
                     {"measured_s", jsonNumber(measured.back())},
                     {"predicted_s", jsonNumber(predicted.back())},
                     {"predicted_tp_comm_s", jsonNumber(e.time.tpComm)},
                     {"error", jsonNumber(predicted.back() / measured.back() - 1)}});
  }
  auto faster = [](const std::vector<double>& s) { return kPlacements[s[1] < s[0]].layout; };
  bench::emitJson({{"bench", "placement_ranking"},
                   {"measured_faster", faster(measured)},
                   {"predicted_faster", faster(predicted)},
                   {"plan_recommends", recommendedPlacement(job)}});
  return 0;
}

}  // namespace

int main(int, char** argv) {
  return strata::bench::calibrationMain("bench_placement", argv, runParent);
}

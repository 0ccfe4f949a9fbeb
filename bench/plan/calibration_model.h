// The planner's inputs built from calibration measurements (calibration_tasks.h),
// shared by bench_planner_calibration (one host) and bench_placement (two
// rehearsed nodes). Nothing here blocks except runTask, which runs the ranks
// of one task to their end (bench_ranks.h) and throws std::runtime_error when
// one fails or the results are missing.
#pragma once

#include <string>
#include <vector>

#include "bench_ranks.h"
#include "calibration_tasks.h"
#include "strata/plan/cluster.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/measured_profile.h"
#include "sync_wait.h"

namespace strata::bench {

// Runs `task` in `ranks` fresh processes (placed by `sites`) and reads what
// rank 0 wrote.
Values runTask(char** argv, const std::string& dir, const std::string& task, int ranks,
               const std::string& layout = "", const RankSites& sites = {});

// Every value's median over repeated rounds of the same measurement.
Values medianOverRounds(const std::vector<Values>& rounds);

// A whole micro-batch (forward, loss, backward of the GPT in one process)
// over the sum of its layers timed one by one by the layer profiler: chained,
// the layers take longer than alone (their inputs and weights no longer in
// cache, autograd's graph across them); measured 1.21 and 1.22 here.
double chainedFactor(const Values& profile, int64_t layers);

// The GPT of calibrationConfig as a measured profile: its layers' times as
// they take inside a whole micro-batch (chainedFactor), slowed by
// `concurrentSlowdown` (the workers sharing the machine).
plan::MeasuredProfile makeProfile(const Values& profile, double concurrentSlowdown);

// A link from the machine task's all-reduces over it (p = 2 ring: t = n / beta
// + 2 alpha): beta is the slope between a small and a large message on the
// idle link; alpha is what tensor parallelism's all-reduce takes right after
// a transformer block, from the last member's arrival (its buffers no longer
// in cache), beyond n / beta. The wait for the member behind is the compute
// noise's (fitNoise). Past the large message, the slope to the huge one is
// the large-message rate (plan/cluster.h's Link).
struct FittedLink {
  double bytesPerSecond = 0;
  double latencySeconds = 0;
  double largeMessageBytes = 0;
  double largeBytesPerSecond = 0;
};
FittedLink fitLink(const Values& machine);
// The same with alpha from `loadedSeconds`, what an all-reduce of
// `loadedBytes` was measured to take elsewhere (bench_placement: what it adds
// to a transformer block's forward on a machine four workers crowd).
FittedLink fitLink(const Values& machine, double loadedSeconds, double loadedBytes);

// The point-to-point path from the machine task's idle sends (t = n / beta +
// alpha, one way): beta and the large-message rate as fitLink's, alpha the
// small message's time beyond n / beta.
FittedLink fitPointToPointLink(const Values& machine);

// The cluster-file keys of `link` under `prefix` ("intra_node_",
// "inter_node_p2p_", ...), one per line.
std::string linkKeys(const std::string& prefix, const FittedLink& link);

// The device's compute noise (plan/cluster.h) from the machine task's waits
// after one and after four transformer blocks (sync_wait.h's fitComputeNoise).
plan::ComputeNoise fitNoise(const Values& machine);

// AdamW + clipping's streaming rate, as the planner's 32 bytes per parameter.
double optimizerBytesPerSecond(const Values& profile);

void writeFile(const std::string& path, const std::string& text);

// The planner's job from a profile file and a cluster file, as `strata plan
// --profile ... --cluster-file ...` reads them.
plan::TrainingJob jobFromFiles(const std::string& profilePath, const std::string& clusterPath,
                               int globalBatch);

// main() of a calibration benchmark: a rank process runs its task
// (runCalibrationTask), the parent `parent`; an exception is printed after
// `name` and exits 1.
int calibrationMain(const char* name, char** argv, int (*parent)(char** argv));

}  // namespace strata::bench

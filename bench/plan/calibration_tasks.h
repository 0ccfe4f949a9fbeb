// The measuring half of bench_planner_calibration: what each re-executed rank
// process does. The parent (bench_planner_calibration.cpp) picks a task with
// STRATA_CALIBRATION_TASK, names the folder for results with
// STRATA_CALIBRATION_DIR and, for training, the layout with
// STRATA_CALIBRATION_LAYOUT ("pp,dp,tp,schedule,cp,cp_algorithm"). Rank 0 writes the task's
// results as `key = value` lines to DIR/TASK.txt. Every task blocks for the
// time it measures; a missing variable or a bad layout throws
// std::runtime_error naming it; communication failures throw the runtime's
// TimeoutError / PeerError.
#pragma once

#include <map>
#include <string>

#include "strata/config/config.h"

namespace strata::bench {

// The GPT every layout trains, and the batch: compute dominates, the whole
// benchmark stays within a few minutes on two cores.
train::TrainConfig calibrationConfig(int pp, int dp, int tp, const std::string& schedule);

// Runs the task named by STRATA_CALIBRATION_TASK in this rank process:
//   "profile" (1 rank): per-layer forward/backward times of the GPT at the
//     micro-batch shape, a block's as one shard of tp = 2, the GPT's
//     micro-batch alone, the optimizer's streaming rate;
//   "machine" (2 ranks): the GPT's micro-batch on both ranks at once,
//     all-reduce (idle and between blocks) and point-to-point times, idle at
//     1 KiB, 4 MiB and 64 MiB;
//   "crowd" (4 ranks as 2 nodes of 2): the GPT's micro-batch on every rank
//     at once, and a block's forward on every rank, alone and followed by an
//     all-reduce in pairs inside or across the nodes, all four ranks busy;
//   "train" (as many ranks as the layout): the median step time of the
//     Trainer.
// This machine is shared with other jobs whose load comes and goes in
// bursts; every compute time here is a median of several runs. (The fastest
// run would favour the short measurements: a burst-free stretch is likelier
// for one layer's pass than for a whole training step, so summed per-layer
// minima under-predict the steps, more so the busier the machine.) The idle
// link probes keep their fastest run: what the link itself can do.
void runCalibrationTask();

using Values = std::map<std::string, double>;
void writeValues(const std::string& path, const Values& values);
// Throws std::runtime_error when the file is missing or a line is malformed.
Values readValues(const std::string& path);

}  // namespace strata::bench

// Failures in the time to train: how often a job is interrupted, how long
// recovering takes, and what that does to the days a plan predicts.
//
// Failures arrive at random (exponentially distributed gaps) at the rate of
// the devices: M = 1 / (devices x failures per device-hour) is the job's
// mean time between failures. Two ways of living with them:
//
// - Checkpoint-restart: the job saves every tau seconds of training (each
//   save stalls it delta seconds); a failure throws away the work since the
//   last save and costs R seconds to restart (detection, rescheduling,
//   start-up, loading). Daly's model for exponential failures gives the wall
//   time of T seconds of work as
//       T_wall = M e^(R/M) (e^((tau + delta)/M) - 1) T / tau,
//   whose minimum over tau is the checkpoint interval chosen here (Young's
//   sqrt(2 delta M) to first order); goodput is T / T_wall.
// - In-job recovery (data-parallel replicas): the failed replica leaves, the
//   others lose the failure's detection and the step it broke and train on
//   with one replica fewer until its replacement rejoins: each failure costs
//   detection + step + rejoin / replicas of productive time, and nothing is
//   trained again. Needs at least two replicas.
//
// simulateFailures() draws whole runs with failures at that rate and
// reports the spread of their wall times. Pure arithmetic: nothing blocks;
// PlanError for a negative rate or time, or fewer than one run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::plan {

struct FailureInputs {
  double failuresPerDeviceHour = 0;
  int devices = 1;
  int replicas = 1;             // data-parallel replicas (dp x cp groups of a whole model)
  double stepSeconds = 0;       // one training step
  double saveSeconds = 0;       // the stall of one checkpoint save (delta)
  double restartSeconds = 0;    // R
  double detectionSeconds = 0;  // a failed replica noticed (in-job)
  double rejoinSeconds = 0;     // its replacement training again (in-job)
};

struct GoodputPlan {
  double mtbfSeconds = 0;                // the job's, M; infinite without failures
  double checkpointIntervalSeconds = 0;  // tau minimising wall time (checkpoint-restart)
  double restartGoodput = 1;             // T / T_wall with checkpoint-restart
  double inJobGoodput = 0;               // with in-job recovery; 0 with one replica
  double inJobLostSecondsPerFailure = 0;
};

// Throws PlanError for a negative input or fewer than one device or replica.
GoodputPlan planGoodput(const FailureInputs& inputs);

// Daly's T_wall / T for checkpoint interval `tau` (seconds of work between saves).
double restartWallPerWork(const FailureInputs& inputs, double tau);

struct SimulatedRuns {
  std::vector<double> wallSeconds;           // each run's, sorted
  std::vector<int64_t> interruptions;        // each run's failures, sorted
  double percentileSeconds(double p) const;  // p in [0, 1]
  double meanInterruptions() const;
};

// `runs` runs of `workSeconds` of training with failures drawn at the
// inputs' rate from `seed`: checkpoint-restart at `tau` (in-job recovery
// when `inJob`, which needs two replicas).
SimulatedRuns simulateFailures(const FailureInputs& inputs, double workSeconds, double tau,
                               bool inJob, int runs, uint64_t seed);

}  // namespace strata::plan

// Compares a parallel run of the Trainer with the independent reference
// (reference_training.h), as the parallel-equals-serial tests do.
//
// A run records, on every rank, kComparedSteps losses, as many global
// gradient norms and a validation loss (recordRun), and saves its parameter
// shards (trainer_test_util.h's writeShards), both into one folder; then
// expectRunMatchesReference trains the reference and compares everything.
//
// The tolerance is 1e-5 relative in float32, per tensor as
// ||got - expected|| / ||expected||: the parallel run sums the same numbers
// in another order (tp all-reduces, dp averages, micro-batches), which moves
// the last bits. A norm rather than the largest entry, because AdamW divides
// each gradient by its own running magnitude: an entry whose gradient is
// near zero turns rounding noise into a step of up to the learning rate
// (measured over the layouts of parallel_equals_serial_test.cpp: single
// entries up to 4e-5 relative, every tensor's norm within 5e-6, every loss
// within 1e-7).
//
// One part is not compared: the key bias of attention. Adding a constant
// vector to every key adds the same number to every score of a query's row,
// which softmax ignores, so its gradient is zero in exact arithmetic and
// nothing but rounding noise, which AdamW amplifies to steps of the learning
// rate on both sides alike.
#pragma once

#include <string>

#include "strata/config/config.h"
#include "strata/train/trainer.h"

namespace strata::train::testing {

constexpr int kComparedSteps = 4;

// Trains kComparedSteps steps and writes this rank's record and shards to dir.
void recordRun(Trainer& trainer, const std::string& dir, int rank);

// In the parent, after all `processes` ranks recorded into dir.
void expectRunMatchesReference(const std::string& dir, int processes, const TrainConfig& config);

// Both: `config`'s layout trained in pp x dp x tp processes, recorded in a
// shared folder named after `name`, compared with the reference.
void expectEqualsReference(const std::string& name, const TrainConfig& config);

}  // namespace strata::train::testing

// The training loop's checkpoint saves as the run configures them:
// synchronous, or (checkpoint.async) started at a checkpoint step and
// completed at a later one while training goes on (async_checkpoint.h).
// Either way a failed save stops the run or, with on_save_error =
// "continue", is logged as a warning; old checkpoints are pruned
// (checkpoint.keep) only after a newer one is complete.
//
// Every method is collective over the trainer's world, called by all ranks
// at the same steps; they block as Trainer::saveCheckpoint does, and finish()
// also until this rank's background write is done.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>

#include "strata/checkpoint/async_checkpoint.h"
#include "strata/train/trainer.h"

namespace strata::train {

class CheckpointSaves {
 public:
  CheckpointSaves(Trainer& trainer, bool leader, std::ostream& log);

  // Saves the current step (an asynchronous save first completes the one
  // still in flight, so at most one is).
  void save();
  // After a step: completes an asynchronous save whose shards are all durable.
  void poll();
  // Completes the save in flight, waiting for it: before a rollback, which
  // must find the newest checkpoint, and at the end of the run.
  void finish();

 private:
  // Runs a save's step that may fail, by the on_save_error policy.
  template <typename Work>
  void guarded(Work&& work);
  void completed(std::optional<int64_t> step);

  Trainer& trainer_;
  bool leader_;
  std::ostream& log_;
  AsyncCheckpoint async_;
};

}  // namespace strata::train

#include "train/checkpoint_saves.h"

#include <ostream>
#include <string>

#include "strata/checkpoint/checkpoint.h"

namespace strata::train {

CheckpointSaves::CheckpointSaves(Trainer& trainer, bool leader, std::ostream& log)
    : trainer_(trainer), leader_(leader), log_(log) {}

template <typename Work>
void CheckpointSaves::guarded(Work&& work) {
  try {
    work();
  } catch (const CheckpointError& error) {
    if (trainer_.config().checkpoint.onSaveError != "continue") throw;
    if (leader_)
      log_ << "strata train: warning: " << error.what() << "; training goes on" << std::endl;
  }
}

void CheckpointSaves::save() {
  if (!trainer_.config().checkpoint.async) {
    guarded([&] {
      trainer_.saveCheckpoint();
      completed(trainer_.stepsDone());
    });
    return;
  }
  finish();
  guarded([&] { trainer_.startCheckpoint(async_); });
}

void CheckpointSaves::poll() {
  guarded([&] { completed(async_.poll(trainer_.world().comm())); });
}

void CheckpointSaves::finish() {
  guarded([&] { completed(async_.finish(trainer_.world().comm())); });
}

void CheckpointSaves::completed(std::optional<int64_t> step) {
  if (!step || !leader_) return;
  const CheckpointConfig& c = trainer_.config().checkpoint;
  if (c.async && *step != trainer_.stepsDone()) {
    log_ << "strata train: the checkpoint of step " << *step
         << " is complete (written in the background during " << trainer_.stepsDone() - *step
         << (trainer_.stepsDone() - *step == 1 ? " step)" : " steps)") << std::endl;
  }
  for (const std::string& removed : pruneCheckpoints(c.dir, c.keep))
    log_ << "strata train: removed old checkpoint " << removed << " (keep " << c.keep << ")"
         << std::endl;
}

}  // namespace strata::train

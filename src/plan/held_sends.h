// The hand-offs a pipeline rank has sent to other ranks and the trainer
// still holds, as the rank runs its actions in order.
//
// A receiver takes its messages on one thread, in the order its actions use
// them (pipeline/recv_prefetcher.h), and over Gloo a message moves only once
// its receive is posted. So a send is delivered once the sender has also sent
// every message its receiver takes before it; messages from a third rank are
// taken to arrive in time. The sender lets go of delivered sends, oldest
// first, when it sends again (pipeline/stage_links.h; a communicator reports
// Gloo's sends done in the order they were posted, runtime/send_watcher.h).
// Pure bookkeeping over the schedule: nothing blocks or throws.
#pragma once

#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "strata/schedule/schedule.h"

namespace strata::plan {

class HeldSends {
 public:
  HeldSends(const schedule::Schedule& pipeline, int rank);

  // Records what `action` sends to another rank, if anything, after letting
  // go of the sends delivered by then. `stashed`: the message is the stage's
  // output, which its stash holds until the stage's backward.
  void afterAction(const schedule::Action& action, bool stashed);
  // The stash of stage's output for `microbatch` is gone: a send still
  // holding that output now holds it alone.
  void stashGone(int stage, int microbatch);
  // Messages held by their sends alone (not also by a stash).
  int held() const;

 private:
  // (sending stage, micro-batch, 0 for an activation or 1 for a gradient)
  using Message = std::tuple<int, int, int>;
  struct Sent {
    Message message;
    int receiver;
    bool stashed;
  };

  bool delivered(const Sent& sent) const;
  void letGoOfDelivered();

  const schedule::Schedule& pipeline_;
  int rank_;
  // Per receiving rank: this rank's messages in the order it takes them,
  // each one's place there, and how many of the first ones are sent.
  std::map<int, std::vector<Message>> takenOrder_;
  std::map<Message, int> placeInOrder_;
  std::map<int, int> sentPrefix_;
  std::map<Message, bool> isSent_;
  std::deque<Sent> held_;
};

}  // namespace strata::plan

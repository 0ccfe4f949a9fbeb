// A trace of a real pipeline run: for every action its start and end, and
// for every wait on a peer its start and end, as a schedule::Timeline, so the
// simulator's renderers (svg.h, chrome_trace.h) draw measured and simulated
// runs the same way.
//
// Times are wall-clock (system_clock) seconds: exact between the processes of
// one host, and as close as NTP keeps hosts across nodes. gatherTimeline
// blocks on point-to-point messages (bounded by the communicator's timeout,
// throwing TimeoutError/PeerError); everything else is local and only throws
// schedule::ScheduleError for a label that is not an action.
#pragma once

#include <vector>

#include "strata/runtime/communicator.h"
#include "strata/schedule/action.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/timeline.h"

namespace strata::pipeline {

struct TraceEvent {
  int rank = 0;
  schedule::Action action;
  bool isWait = false;  // waiting for the peer's message this action needs
  double start = 0;     // seconds, system_clock
  double end = 0;
};

// Milliseconds since `origin` (seconds, system_clock). Actions are labelled
// "1F3" with their kind letter as kind; waits are labelled "wait 1F3", kind "wait".
schedule::Timeline toTimeline(const std::vector<TraceEvent>& events, int ranks, double origin);
// The earliest start among `events` (0 when empty).
double earliestStart(const std::vector<TraceEvent>& events);

// Every pp rank calls this with its own events; pp rank 0 returns everybody's
// events, the others return their own.
std::vector<TraceEvent> gatherEvents(Communicator& pp, const std::vector<TraceEvent>& mine);

// Mean measured duration (seconds) of F, B, I and W of every stage, ready for
// the simulator; kinds never measured keep 0. Waits are not counted.
std::vector<schedule::StageCosts> measuredStageCosts(const std::vector<TraceEvent>& events,
                                                     int stages);

// The measured bubble of each rank: 1 - (time in actions) / (last end - first
// start over all ranks' events). One value per rank.
std::vector<double> measuredBubbleFractions(const std::vector<TraceEvent>& events, int ranks);

}  // namespace strata::pipeline

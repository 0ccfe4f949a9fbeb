// A communicator that writes every operation to the flight recorder
// (strata/runtime/flight_recorder.h) around the one it wraps: issued when
// started, completed, timed out or failed when its wait ends. Collectives are
// numbered per group; sends and receives per peer and direction, so a
// receiver's recv #n matches its sender's send #n. Blocks, throws and times
// out exactly as the wrapped communicator does.
#pragma once

#include <memory>

#include "strata/runtime/communicator.h"
#include "strata/runtime/flight_recorder.h"

namespace strata {

std::shared_ptr<Communicator> recordFlight(std::shared_ptr<Communicator> inner,
                                           std::shared_ptr<FlightRecorder> recorder);

}  // namespace strata

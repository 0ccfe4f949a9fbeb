// SIGINT and SIGTERM for the launcher: the handler only records the signal
// (a handler can do nothing richer); the supervision loop stops the workers
// when it sees it, and every wait for other launchers (WaitProgress) ends
// at once by throwing StopSignalled, so a launcher asked to stop while it
// waits in a rendezvous exits now, not when that wait times out.
#pragma once

#include "strata/error.h"

namespace strata {

// Installs the handlers (and ignores SIGPIPE: a lost peer is an error
// returned by the write, not a death).
void installStopHandlers();

// The signal received; 0 while none.
int stopSignal();

class StopSignalled : public Error {
 public:
  explicit StopSignalled(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws StopSignalled when a stop signal arrived.
void throwIfStopSignalled();

}  // namespace strata

#include "stop_signal.h"

#include <signal.h>

#include <string>

namespace strata {
namespace {

// The one piece of process-wide state: the signal a handler saw.
volatile sig_atomic_t gReceivedSignal = 0;

void onSignal(int signal) { gReceivedSignal = signal; }

}  // namespace

void installStopHandlers() {
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int stopSignal() { return gReceivedSignal; }

StopSignalled::StopSignalled(int signal)
    : Error("stopped by signal " + std::to_string(signal)), signal_(signal) {}

void throwIfStopSignalled() {
  if (int signal = stopSignal()) throw StopSignalled(signal);
}

}  // namespace strata

#include "failure_report.h"

#include <chrono>
#include <sstream>

namespace strata {
namespace {

bool stderrMentions(const WorkerState& w, const char* text) {
  for (const std::string& line : w.lastStderr) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

// A failure caused by another worker's failure: Strata's communicators say so
// in their messages (every PeerError for a peer's death, on shared memory or
// Gloo, reads "failed (a peer exited...)").
bool isEcho(const WorkerState& w) {
  return stderrMentions(w, "timed out") || stderrMentions(w, "a peer exited");
}

// The failure to blame: the first that is not an echo of another, else the first.
int primaryFailure(const WorkerGroup& group, const std::vector<int>& failures) {
  for (int i : failures) {
    if (!isEcho(group.workers()[i])) return i;
  }
  return failures.front();
}

}  // namespace

std::string failureCause(const WorkerGroup& group, const std::vector<int>& failures) {
  const WorkerState& w = group.workers()[primaryFailure(group, failures)];
  return "rank " + std::to_string(w.spec.globalRank) + " (local rank " +
         std::to_string(w.spec.localRank) + ") failed with " + w.exit->describe();
}

std::string describeFailure(const WorkerGroup& group, const std::vector<int>& failures) {
  int primary = primaryFailure(group, failures);
  const WorkerState& w = group.workers()[primary];
  double seconds = std::chrono::duration<double>(w.endedAt - w.startedAt).count();
  std::ostringstream out;
  out.precision(3);
  out << "strata launch: " << failureCause(group, failures) << " after " << seconds << " s";
  if (failures.size() > 1) {
    out << "\nstrata launch: also failed, most likely because of it:";
    for (int i : failures) {
      if (i != primary) out << " rank " << group.workers()[i].spec.globalRank;
    }
  }
  if (isEcho(w)) {
    std::string stalled;
    for (size_t i = 0; i < group.workers().size(); ++i) {
      if (group.workers()[i].exit) continue;
      stalled += " rank " + std::to_string(group.workers()[i].spec.globalRank);
      if (group.isStopped(static_cast<int>(i))) stalled += " (stopped by a signal)";
    }
    if (!stalled.empty()) {
      out << "\nstrata launch: it waited in vain for peers; still running then, so likely "
             "stalled:"
          << stalled;
    }
  }
  if (!w.lastStderr.empty()) {
    out << "\nstrata launch: last lines of rank " << w.spec.globalRank << "'s stderr:";
    for (const std::string& line : w.lastStderr) out << "\n  | " << line;
  }
  return out.str();
}

}  // namespace strata

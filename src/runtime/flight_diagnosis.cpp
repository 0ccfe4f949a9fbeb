// diagnoseFlight() (strata/runtime/flight_recorder.h): for each group, how
// far each of its ranks got, and what a rank that fell behind was doing.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "strata/runtime/flight_recorder.h"

namespace strata {
namespace {

using Entry = RankFlight::Entry;

// One rank's progress in one group.
struct Progress {
  int rank = 0;
  const RankFlight* flight = nullptr;
  const Entry* lastEntered = nullptr;
  uint64_t lastCompleted = 0;
};

struct Group {
  std::string name;
  int size = 0;
  std::vector<Progress> members;  // the ranks with records of it
};

// "0-2, 5"
std::string rankList(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

std::string ranksWord(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rankList(ranks);
}

std::string seconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

// "recv from rank 2 of pp[dp=0] #97"
std::string describeOp(const Entry& e) {
  std::string text = flightOpName(e.op);
  if (e.peer >= 0) text += (e.op == FlightOp::kRecv ? " from" : " to");
  if (e.peer >= 0) text += " rank " + std::to_string(e.peer);
  return text + " of " + e.group + " #" + std::to_string(e.sequence);
}

bool pointToPoint(const Entry& e) { return e.op == FlightOp::kSend || e.op == FlightOp::kRecv; }

// Collectives only: a send's or recv's number counts that peer's messages.
std::map<std::string, Group> groupsOf(const std::vector<RankFlight>& ranks) {
  std::map<std::string, Group> groups;
  for (const RankFlight& flight : ranks) {
    std::map<std::string, Progress> mine;
    for (const Entry& e : flight.entries) {
      if (pointToPoint(e)) continue;
      Progress& p = mine[e.group];
      p.rank = flight.rank;
      p.flight = &flight;
      if (!p.lastEntered || e.sequence > p.lastEntered->sequence) p.lastEntered = &e;
      if (e.state == FlightState::kCompleted)
        p.lastCompleted = std::max(p.lastCompleted, e.sequence);
      groups[e.group].name = e.group;
      groups[e.group].size = e.groupSize;
    }
    for (auto& [name, progress] : mine) groups[name].members.push_back(progress);
  }
  return groups;
}

// What `flight`'s rank was doing last: its newest operation that did not
// complete, else its newest one.
std::string lastActivity(const RankFlight& flight, int64_t newestNs) {
  const Entry* open = nullptr;
  for (const Entry& e : flight.entries)
    if (e.state != FlightState::kCompleted && (!open || e.startNs >= open->startNs)) open = &e;
  if (open) {
    std::string state =
        open->state == FlightState::kIssued ? "" : std::string(", ") + flightStateName(open->state);
    return "it was in " + describeOp(*open) + state + ", issued " +
           seconds(newestNs - open->startNs) + " before the newest record";
  }
  if (flight.entries.empty()) return "it recorded no operation";
  return "its last operation, " + describeOp(flight.entries.back()) + ", completed";
}

// The ranks that entered operation `sequence` as something else than `first`
// did: a desynchronised group.
std::string mismatches(const Group& g, uint64_t sequence) {
  const Entry* first = nullptr;
  std::string text;
  for (const Progress& p : g.members) {
    for (const Entry& e : p.flight->entries) {
      if (e.group != g.name || e.sequence != sequence || pointToPoint(e)) continue;
      if (!first) {
        first = &e;
      } else if (e.op != first->op || e.numel != first->numel) {
        text += "; rank " + std::to_string(p.rank) + " entered #" + std::to_string(sequence) +
                " as " + flightOpName(e.op) + " of " + std::to_string(e.numel) +
                " elements, where another entered it as " + flightOpName(first->op) + " of " +
                std::to_string(first->numel);
      }
    }
  }
  return text;
}

std::string diagnoseGroup(const Group& g, int64_t newestNs) {
  uint64_t top = 0;
  const Entry* topEntry = nullptr;
  for (const Progress& p : g.members) {
    if (p.lastEntered->sequence > top) {
      top = p.lastEntered->sequence;
      topEntry = p.lastEntered;
    }
  }
  std::vector<int> completed, stuck, behind;
  std::string stuckState;
  for (const Progress& p : g.members) {
    if (p.lastEntered->sequence < top) {
      behind.push_back(p.rank);
    } else if (p.lastCompleted >= top) {
      completed.push_back(p.rank);
    } else {
      stuck.push_back(p.rank);
      if (p.lastEntered->state != FlightState::kIssued)
        stuckState = flightStateName(p.lastEntered->state);
    }
  }
  int missing = g.size - static_cast<int>(g.members.size());
  std::string mismatch = mismatches(g, top);
  if (behind.empty() && stuck.empty() && missing <= 0 && mismatch.empty()) return "";
  std::string op = std::string(flightOpName(topEntry->op)) + " #" + std::to_string(top);
  std::ostringstream out;
  out << g.name << ":";
  std::string sep = " ";
  if (!completed.empty()) {
    out << sep << ranksWord(completed) << " completed " << op;
    sep = "; ";
  }
  if (!stuck.empty()) {
    out << sep << ranksWord(stuck) << " entered " << op << " and did not complete it";
    if (!stuckState.empty()) out << " (" << stuckState << ")";
    sep = "; ";
  }
  for (const Progress& p : g.members) {
    if (p.lastEntered->sequence >= top) continue;
    out << sep << "rank " << p.rank << " never entered it (last completed #" << p.lastCompleted
        << "; " << lastActivity(*p.flight, newestNs) << ")";
    sep = "; ";
  }
  if (missing > 0)
    out << sep << missing << " of its " << g.size
        << " ranks left no records here (on another node, or never started)";
  out << mismatch;
  return out.str();
}

// A rank waiting in a recv whose message its peer never sent: "pp[dp=0]:
// rank 1 waits in recv #4 from rank 0 of the group (global 0), which issued
// only 3 sends to it (it was in ...)".
std::vector<std::string> diagnoseMessages(const std::vector<RankFlight>& ranks, int64_t newestNs) {
  // (group, group rank) -> the rank's flight; (group, from, to) -> sends issued.
  std::map<std::pair<std::string, int>, const RankFlight*> members;
  std::map<std::tuple<std::string, int, int>, uint64_t> sent;
  for (const RankFlight& flight : ranks) {
    for (const Entry& e : flight.entries) {
      members[{e.group, e.groupRank}] = &flight;
      if (e.op != FlightOp::kSend) continue;
      uint64_t& n = sent[{e.group, e.groupRank, e.peer}];
      n = std::max(n, e.sequence);
    }
  }
  std::vector<std::string> problems;
  for (const RankFlight& flight : ranks) {
    for (const Entry& e : flight.entries) {
      if (e.op != FlightOp::kRecv || e.state == FlightState::kCompleted) continue;
      auto sender = members.find({e.group, e.peer});
      if (sender == members.end()) continue;  // the sender's file is elsewhere
      uint64_t issued = sent[{e.group, e.peer, e.groupRank}];
      if (issued >= e.sequence) continue;  // sent: the wait is the transport's
      problems.push_back(e.group + ": rank " + std::to_string(flight.rank) + " waits in recv #" +
                         std::to_string(e.sequence) + " from rank " + std::to_string(e.peer) +
                         " of the group (global " + std::to_string(sender->second->rank) +
                         "), which issued " + std::to_string(issued) + " sends to it (" +
                         lastActivity(*sender->second, newestNs) + ")");
    }
  }
  return problems;
}

}  // namespace

std::string diagnoseFlight(const std::vector<RankFlight>& ranks) {
  int64_t newestNs = 0;
  for (const RankFlight& flight : ranks)
    for (const Entry& e : flight.entries) newestNs = std::max({newestNs, e.startNs, e.endNs});
  std::vector<int> present;
  for (const RankFlight& flight : ranks) present.push_back(flight.rank);
  std::ostringstream out;
  out << "flight records of " << ranksWord(present);
  int worldSize = ranks.empty() ? 0 : ranks.front().worldSize;
  if (static_cast<int>(present.size()) < worldSize)
    out << " (of " << worldSize << "; the others left none here)";
  out << ":";
  std::map<std::string, Group> groups = groupsOf(ranks);
  bool agree = true;
  for (const auto& [name, group] : groups) {
    std::string problem = diagnoseGroup(group, newestNs);
    if (problem.empty()) continue;
    out << "\n  " << problem;
    agree = false;
  }
  for (const std::string& problem : diagnoseMessages(ranks, newestNs)) {
    out << "\n  " << problem;
    agree = false;
  }
  if (agree) out << " the ranks of every group (" << groups.size() << ") agree";
  return out.str();
}

}  // namespace strata

// The flight recorder: every rank keeps a ring of its last communication
// operations in a memory-mapped file, so the record outlives the process
// (a rank killed by SIGKILL, or stopped, leaves it as it was) and the
// launcher can read why a job hung without asking the ranks anything.
//
// One file per rank, DIR/rank-NNNNN.flight: a header (rank, world size,
// host, pid, capacity) and `capacity` fixed-size records. A record is filled
// when an operation is issued (group, the operation's number in that group,
// op, elements, dtype, peer, start time) and updated when its wait ends
// (completed, timed out or failed, end time). Writing one costs a few stores
// into the mapping: no system call, no lock (the slot comes from an atomic
// counter).
//
// diagnoseFlight() reads the files of a job and says, for each group whose
// ranks disagree, which ranks entered or completed which operation and what
// the others were doing instead:
//
//   dp[pp=0]: ranks 0-2 entered all-reduce #1842 and did not complete it
//   (timed out); rank 3 never entered it (last completed #1841; it was in
//   recv from rank 2 of pp[dp=0] #97, issued 31.0 s before its last record)
//
// Nothing here blocks but file I/O; opening throws SystemError naming the
// path, reading throws Error naming a malformed file.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata {

enum class FlightOp : uint8_t {
  kAllReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kSend,
  kRecv,
  kBarrier,
  kAllToAll,
};
enum class FlightState : uint8_t { kEmpty, kIssued, kCompleted, kTimedOut, kFailed };

const char* flightOpName(FlightOp op);     // "all-reduce"
const char* flightStateName(FlightState);  // "issued"

// 128 bytes, the same on every build: the file's layout.
struct FlightRecord {
  uint64_t sequence = 0;  // the operation's number in its group, from 1
  int64_t startNs = 0;    // CLOCK_REALTIME at issue
  int64_t endNs = 0;      // at the end of the wait; 0 while issued
  int64_t numel = 0;
  int32_t peer = -1;  // group rank of a send's or recv's peer; -1 for collectives
  int32_t groupRank = 0;
  int32_t groupSize = 0;
  uint8_t op = 0;     // FlightOp
  uint8_t dtype = 0;  // c10::ScalarType
  // FlightState, written last: a reader that sees kEmpty ignores the slot.
  std::atomic<uint8_t> state{0};
  uint8_t reserved = 0;
  char group[80] = {};  // the communicator's name, "tp[pp=0,dp=1]", truncated
};
static_assert(sizeof(FlightRecord) == 128, "FlightRecord is the file's record layout");

class FlightRecorder {
 public:
  // Creates DIR (and its parents) and maps DIR/rank-NNNNN.flight, replacing
  // an older file there. Throws SystemError naming the path.
  static std::shared_ptr<FlightRecorder> open(const std::string& dir, int rank, int worldSize,
                                              int64_t capacity = 4096);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // The record of an operation just issued; the caller marks its end with
  // finish(). Thread-safe. The slot is reused `capacity` records later.
  FlightRecord* issue(const std::string& group, int groupRank, int groupSize, uint64_t sequence,
                      FlightOp op, int64_t numel, uint8_t dtype, int peer);
  static void finish(FlightRecord* record, FlightState state);

  const std::string& path() const { return path_; }

 private:
  FlightRecorder() = default;
  std::string path_;
  void* map_ = nullptr;
  size_t bytes_ = 0;
  int64_t capacity_ = 0;
  std::atomic<uint64_t>* next_ = nullptr;
  FlightRecord* records_ = nullptr;
};

// One rank's file as read back: its records oldest first.
struct RankFlight {
  int rank = 0;
  int worldSize = 0;
  int64_t pid = 0;
  std::string host;
  std::string path;
  struct Entry {
    std::string group;
    int groupRank = 0, groupSize = 0;
    uint64_t sequence = 0;
    FlightOp op{};
    FlightState state{};
    int64_t numel = 0;
    uint8_t dtype = 0;
    int peer = -1;
    int64_t startNs = 0, endNs = 0;
  };
  std::vector<Entry> entries;
};

// Every rank-*.flight file in `dir`, by rank. Throws Error naming a file that
// is not a flight record, or when `dir` holds none.
std::vector<RankFlight> readFlightRecords(const std::string& dir);

// The cross-rank diagnosis described above: one paragraph per group whose
// ranks disagree, or a line saying every group agrees (with each group's
// last operation). Ranks missing from `ranks` are named as such.
std::string diagnoseFlight(const std::vector<RankFlight>& ranks);

}  // namespace strata

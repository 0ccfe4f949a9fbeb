#include "strata/runtime/flight_recorder.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "strata/error.h"

namespace strata {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'F', 'R'};
constexpr uint32_t kVersion = 1;

// The file's first 128 bytes.
struct FileHeader {
  char magic[8];
  uint32_t version;
  int32_t rank;
  int32_t worldSize;
  int32_t reserved;
  int64_t pid;
  int64_t capacity;
  std::atomic<uint64_t> next;  // records issued so far; slot = number % capacity
  char host[80];
};
static_assert(sizeof(FileHeader) == 128, "the flight file's header is 128 bytes");

int64_t nowNs() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

std::string fileName(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.flight", rank);
  return name;
}

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw SystemError("flight recorder: cannot " + what + " '" + path + "'", errno);
}

}  // namespace

const char* flightOpName(FlightOp op) {
  switch (op) {
    case FlightOp::kAllReduce:
      return "all-reduce";
    case FlightOp::kBroadcast:
      return "broadcast";
    case FlightOp::kAllGather:
      return "all-gather";
    case FlightOp::kReduceScatter:
      return "reduce-scatter";
    case FlightOp::kSend:
      return "send";
    case FlightOp::kRecv:
      return "recv";
    case FlightOp::kBarrier:
      return "barrier";
    case FlightOp::kAllToAll:
      return "all-to-all";
  }
  return "unknown operation";
}

const char* flightStateName(FlightState state) {
  switch (state) {
    case FlightState::kEmpty:
      return "empty";
    case FlightState::kIssued:
      return "issued";
    case FlightState::kCompleted:
      return "completed";
    case FlightState::kTimedOut:
      return "timed out";
    case FlightState::kFailed:
      return "failed";
  }
  return "unknown state";
}

std::shared_ptr<FlightRecorder> FlightRecorder::open(const std::string& dir, int rank,
                                                     int worldSize, int64_t capacity) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw SystemError("flight recorder: cannot create '" + dir + "'", error.value());
  std::shared_ptr<FlightRecorder> recorder(new FlightRecorder());
  recorder->path_ = (std::filesystem::path(dir) / fileName(rank)).string();
  recorder->capacity_ = capacity;
  recorder->bytes_ = sizeof(FileHeader) + static_cast<size_t>(capacity) * sizeof(FlightRecord);
  const std::string& path = recorder->path_;
  // A fresh file each time: a restarted rank's records start from nothing.
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create", path);
  if (::ftruncate(fd, static_cast<off_t>(recorder->bytes_)) != 0) {
    ::close(fd);
    fail("size", path);
  }
  void* map = ::mmap(nullptr, recorder->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) fail("map", path);
  recorder->map_ = map;
  auto* header = new (map) FileHeader{};
  std::memcpy(header->magic, kMagic, sizeof kMagic);
  header->version = kVersion;
  header->rank = rank;
  header->worldSize = worldSize;
  header->pid = ::getpid();
  header->capacity = capacity;
  ::gethostname(header->host, sizeof header->host - 1);
  recorder->next_ = &header->next;
  recorder->records_ = new (static_cast<char*>(map) + sizeof(FileHeader)) FlightRecord[capacity];
  return recorder;
}

FlightRecorder::~FlightRecorder() {
  if (map_) ::munmap(map_, bytes_);
}

FlightRecord* FlightRecorder::issue(const std::string& group, int groupRank, int groupSize,
                                    uint64_t sequence, FlightOp op, int64_t numel, uint8_t dtype,
                                    int peer) {
  uint64_t number = next_->fetch_add(1, std::memory_order_relaxed);
  FlightRecord* r = &records_[number % static_cast<uint64_t>(capacity_)];
  r->state.store(static_cast<uint8_t>(FlightState::kEmpty), std::memory_order_relaxed);
  r->sequence = sequence;
  r->startNs = nowNs();
  r->endNs = 0;
  r->numel = numel;
  r->peer = peer;
  r->groupRank = groupRank;
  r->groupSize = groupSize;
  r->op = static_cast<uint8_t>(op);
  r->dtype = dtype;
  size_t n = std::min(group.size(), sizeof r->group - 1);
  std::memcpy(r->group, group.data(), n);
  r->group[n] = '\0';
  r->state.store(static_cast<uint8_t>(FlightState::kIssued), std::memory_order_release);
  return r;
}

void FlightRecorder::finish(FlightRecord* record, FlightState state) {
  record->endNs = nowNs();
  record->state.store(static_cast<uint8_t>(state), std::memory_order_release);
}

namespace {

RankFlight readOne(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("flight recorder: cannot read '" + path.string() + "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto malformed = [&](const std::string& why) {
    return Error("flight recorder: '" + path.string() + "' is not a flight record file: " + why);
  };
  if (bytes.size() < sizeof(FileHeader)) throw malformed("shorter than its header");
  FileHeader header;
  std::memcpy(static_cast<void*>(&header), bytes.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) throw malformed("no STRATAFR mark");
  if (header.version != kVersion)
    throw malformed("version " + std::to_string(header.version) + ", this Strata reads " +
                    std::to_string(kVersion));
  if (header.capacity <= 0 ||
      bytes.size() != sizeof(FileHeader) + header.capacity * sizeof(FlightRecord))
    throw malformed("its size does not match its capacity of " + std::to_string(header.capacity));
  RankFlight flight;
  flight.rank = header.rank;
  flight.worldSize = header.worldSize;
  flight.pid = header.pid;
  header.host[sizeof header.host - 1] = '\0';
  flight.host = header.host;
  flight.path = path.string();
  uint64_t issued = header.next.load();
  auto capacity = static_cast<uint64_t>(header.capacity);
  uint64_t first = issued > capacity ? issued - capacity : 0;
  for (uint64_t number = first; number < issued; ++number) {
    const char* at = bytes.data() + sizeof(FileHeader) + (number % capacity) * sizeof(FlightRecord);
    FlightRecord r;
    std::memcpy(static_cast<void*>(&r), at, sizeof r);
    auto state = static_cast<FlightState>(r.state.load());
    if (state == FlightState::kEmpty || r.op > static_cast<uint8_t>(FlightOp::kAllToAll)) continue;
    r.group[sizeof r.group - 1] = '\0';
    flight.entries.push_back({r.group, r.groupRank, r.groupSize, r.sequence,
                              static_cast<FlightOp>(r.op), state, r.numel, r.dtype, r.peer,
                              r.startNs, r.endNs});
  }
  return flight;
}

}  // namespace

std::vector<RankFlight> readFlightRecords(const std::string& dir) {
  std::vector<RankFlight> ranks;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".flight") ranks.push_back(readOne(entry.path()));
  }
  if (error) throw Error("flight recorder: cannot list '" + dir + "': " + error.message());
  if (ranks.empty()) throw Error("flight recorder: no rank-*.flight files in '" + dir + "'");
  std::sort(ranks.begin(), ranks.end(),
            [](const RankFlight& a, const RankFlight& b) { return a.rank < b.rank; });
  return ranks;
}

}  // namespace strata

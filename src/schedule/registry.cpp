#include "strata/schedule/registry.h"

#include <algorithm>
#include <functional>

#include "strata/schedule/error.h"
#include "strata/schedule/generators.h"

namespace strata::schedule {
namespace {

struct Entry {
  GeneratorInfo info;
  std::function<Schedule(const GeneratorOptions&)> make;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{"gpipe", "all forwards, then all backwards", false},
       [](const GeneratorOptions& o) { return gpipe(o.ranks, o.microbatches); }},
      {{"1f1b", "one forward, one backward; stashes at most p microbatches", false},
       [](const GeneratorOptions& o) { return oneFOneB(o.ranks, o.microbatches); }},
      {{"interleaved-1f1b", "1F1B over v model chunks per rank; bubble / v", true},
       [](const GeneratorOptions& o) {
         return interleavedOneFOneB(o.ranks, o.microbatches, o.virtualStages);
       }},
      {{"zb-h1", "zero bubble: backward split into I and W; 1F1B memory", false},
       [](const GeneratorOptions& o) { return zeroBubbleH1(o.ranks, o.microbatches); }},
      {{"zb-v", "zero bubble V: two chunks per rank in a V, I and W split; 1F1B memory", false, 2},
       [](const GeneratorOptions& o) { return zeroBubbleV(o.ranks, o.microbatches); }},
      {{"dualpipe-v", "DualPipe in a V: each forward overlapped with a backward; m >= 2p", false,
        2},
       [](const GeneratorOptions& o) { return dualPipeV(o.ranks, o.microbatches); }},
  };
  return table;
}

// The known names, or only those of schedules that take virtual stages.
std::string joinedNames(bool onlyWithVirtualStages = false) {
  std::string joined;
  for (const Entry& entry : entries()) {
    if (onlyWithVirtualStages && !entry.info.takesVirtualStages) continue;
    joined += (joined.empty() ? "" : ", ") + entry.info.name;
  }
  return joined;
}

}  // namespace

const std::vector<GeneratorInfo>& knownGenerators() {
  static const std::vector<GeneratorInfo> infos = [] {
    std::vector<GeneratorInfo> list;
    for (const Entry& entry : entries()) list.push_back(entry.info);
    return list;
  }();
  return infos;
}

std::vector<std::string> generatorNames() {
  std::vector<std::string> names;
  for (const Entry& entry : entries()) names.push_back(entry.info.name);
  return names;
}

Schedule generate(const std::string& name, const GeneratorOptions& options) {
  for (const Entry& entry : entries()) {
    if (entry.info.name != name) continue;
    if (!entry.info.takesVirtualStages && options.virtualStages != 1) {
      const int perRank = entry.info.stagesPerRank;
      throw ScheduleError("schedule '" + name + "' has " +
                          (perRank == 1 ? "one stage" : std::to_string(perRank) + " stages") +
                          " per rank, but virtual stages " + std::to_string(options.virtualStages) +
                          " was asked for; schedules with virtual stages: " + joinedNames(true));
    }
    return entry.make(options);
  }
  throw ScheduleError("unknown schedule '" + name + "'; known schedules: " + joinedNames());
}

std::vector<int> stagePlacement(const std::string& name, int ranks, int virtualStages) {
  for (const Entry& entry : entries()) {
    if (entry.info.name != name) continue;
    if (entry.info.stagesPerRank == 2) return vPlacement(ranks);
    if (ranks < 1) throw ScheduleError("ranks must be >= 1, got " + std::to_string(ranks));
    std::vector<int> stageRanks(static_cast<size_t>(ranks) * std::max(virtualStages, 1));
    for (size_t s = 0; s < stageRanks.size(); ++s) stageRanks[s] = static_cast<int>(s) % ranks;
    return stageRanks;
  }
  throw ScheduleError("unknown schedule '" + name + "'; known schedules: " + joinedNames());
}

}  // namespace strata::schedule

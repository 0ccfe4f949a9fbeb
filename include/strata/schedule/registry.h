// Schedule generators by name, for the CLI and the planner.
//
// Names: "gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-v", "dualpipe-v"
// (the last two run two stages per rank, in a V). generate() throws
// ScheduleError listing the known names for an unknown one, naming the value
// when virtualStages is given to a schedule that has none, and whatever the
// generator itself throws (generators.h). A new schedule is a new generator
// plus one entry in registry.cpp.
#pragma once

#include <string>
#include <vector>

#include "strata/schedule/schedule.h"

namespace strata::schedule {

struct GeneratorOptions {
  int ranks = 1;
  int microbatches = 1;
  int virtualStages = 1;  // model chunks per rank; only interleaved schedules take more than 1
};

struct GeneratorInfo {
  std::string name;
  std::string summary;
  bool takesVirtualStages = false;
  // Stages per rank of a schedule that does not take virtual stages: 2 for the
  // V schedules, whose schedules have 2 * ranks stages.
  int stagesPerRank = 1;
};

const std::vector<GeneratorInfo>& knownGenerators();
std::vector<std::string> generatorNames();
Schedule generate(const std::string& name, const GeneratorOptions& options);
// The stage-to-rank map generate() would give `ranks` ranks and
// `virtualStages` chunks per rank, without building the schedule: the V of
// the schedules with two stages per rank (vPlacement), else round-robin over
// ranks x virtualStages. Throws ScheduleError for an unknown name or ranks < 1.
std::vector<int> stagePlacement(const std::string& name, int ranks, int virtualStages);

}  // namespace strata::schedule

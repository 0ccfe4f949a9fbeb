#include "simulate_command.h"

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "strata/error.h"
#include "strata/schedule/chrome_trace.h"
#include "strata/schedule/registry.h"
#include "strata/schedule/schedule_text.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/svg.h"
#include "strata/schedule/text_grid.h"
#include "strata/util/cli_flags.h"

namespace strata {
namespace {

namespace sched = strata::schedule;

struct SimulateOptions {
  std::string scheduleName = "1f1b";
  std::string file, svgPath, tracePath;
  int64_t ranks = 4, microbatches = 8, virtualStages = 1;
  double forwardCost = 1, backwardCost = 2, inputCost = 1, weightCost = 1, latency = 0;
  bool printText = false;
};

void addFlags(CLI::App& command, SimulateOptions& o) {
  std::string names;
  for (const std::string& name : sched::generatorNames())
    names += (names.empty() ? "" : ", ") + name;
  addTextFlag(command, "--schedule", &o.scheduleName, "schedule to generate: " + names);
  addIntFlag(command, "--ranks", &o.ranks, "pipeline ranks", 1, INT_MAX);
  addIntFlag(command, "--microbatches", &o.microbatches, "microbatches per step", 1, INT_MAX);
  addIntFlag(command, "--virtual-stages", &o.virtualStages,
             "model chunks per rank (interleaved-1f1b)", 1, INT_MAX);
  addTextFlag(command, "--file", &o.file,
              "read the schedule from this file instead of generating one");
  addRealFlag(command, "--forward-cost", &o.forwardCost,
              "forward time of one microbatch through one rank's layers (split evenly over "
              "its stages)");
  addRealFlag(command, "--backward-cost", &o.backwardCost, "full backward (B) time, likewise");
  addRealFlag(command, "--input-cost", &o.inputCost,
              "input-gradient (I) time; half of --backward-cost unless set");
  addRealFlag(command, "--weight-cost", &o.weightCost,
              "weight-gradient (W) time; half of --backward-cost unless set");
  addRealFlag(command, "--latency", &o.latency, "point-to-point latency between ranks");
  addTextFlag(command, "--svg", &o.svgPath, "write an SVG timeline to this path");
  addTextFlag(command, "--trace", &o.tracePath, "write Chrome-trace JSON to this path");
  addSwitch(command, "text", &o.printText, "also print the schedule in its text file format");
}

void checkFlags(const CLI::App& command, const SimulateOptions& o) {
  if (o.file.empty()) return;
  for (const char* flag : {"--schedule", "--ranks", "--microbatches", "--virtual-stages"}) {
    if (command.count(flag) > 0) {
      throw flagError(command, std::string(flag) + " conflicts with --file, which " +
                                   "gives the schedule, its ranks and its microbatches");
    }
  }
}

sched::Schedule buildSchedule(const SimulateOptions& o) {
  if (!o.file.empty()) return sched::readScheduleFile(o.file);
  return sched::generate(o.scheduleName,
                         {static_cast<int>(o.ranks), static_cast<int>(o.microbatches),
                          static_cast<int>(o.virtualStages)});
}

// Costs are given for a rank's whole share of the model, so schedules with
// more stages per rank are compared on the same model: each stage gets an
// equal part of its rank's cost.
sched::CostModel buildCosts(const CLI::App& command, const SimulateOptions& o,
                            const sched::Schedule& schedule) {
  const double input = command.count("--input-cost") > 0 ? o.inputCost : o.backwardCost / 2;
  const double weight = command.count("--weight-cost") > 0 ? o.weightCost : o.backwardCost / 2;
  sched::CostModel costs;
  costs.latency = o.latency;
  for (int stage = 0; stage < schedule.stages(); ++stage) {
    const double share = 1.0 / schedule.stagesOn(schedule.rankOf(stage)).size();
    costs.perStage.push_back(
        {o.forwardCost * share, o.backwardCost * share, input * share, weight * share});
  }
  return costs;
}

void printSummary(std::ostream& out, const sched::SimulationResult& result) {
  out << "makespan " << result.makespan << "\n";
  char line[128];
  std::snprintf(line, sizeof(line), "%-6s %12s %12s %8s %11s\n", "rank", "busy", "idle", "bubble",
                "peak stash");
  out << line;
  for (std::size_t rank = 0; rank < result.ranks.size(); ++rank) {
    const sched::RankSummary& r = result.ranks[rank];
    std::snprintf(line, sizeof(line), "%-6zu %12.6g %12.6g %7.2f%% %11d\n", rank, r.busy, r.idle,
                  100 * r.bubbleFraction, r.peakStash);
    out << line;
  }
  std::snprintf(line, sizeof(line), "mean bubble %.2f%%, worst %.2f%%, peak stash %d\n",
                100 * result.meanBubbleFraction(), 100 * result.maxBubbleFraction(),
                result.maxPeakStash());
  out << line;
}

void writeFile(const std::string& path, const std::string& contents) {
  std::ofstream file(path);
  file << contents;
  if (!file) throw Error("cannot write '" + path + "'");
}

int run(const CLI::App& command, const SimulateOptions& o) {
  checkFlags(command, o);
  const sched::Schedule schedule = buildSchedule(o);
  const sched::SimulationResult result =
      sched::simulate(schedule, buildCosts(command, o, schedule));
  const std::string title = o.file.empty() ? o.scheduleName : o.file;
  std::cout << title << ": " << schedule.ranks() << " ranks, " << schedule.stages() << " stages, "
            << schedule.microbatches() << " microbatches\n\n";
  const sched::Timeline timeline = sched::toTimeline(result);
  std::cout << sched::renderTimeGrid(timeline) << "\n";
  printSummary(std::cout, result);
  if (o.printText) std::cout << "\n" << sched::formatSchedule(schedule);
  if (!o.svgPath.empty()) writeFile(o.svgPath, sched::renderSvg(timeline, title));
  if (!o.tracePath.empty()) writeFile(o.tracePath, sched::toChromeTrace(timeline));
  return 0;
}

}  // namespace

Subcommand addSimulateCommand(CLI::App& strata) {
  CLI::App* command =
      strata.add_subcommand("simulate", "validate and time a pipeline schedule; draw its timeline");
  command->footer(
      "Validates a pipeline schedule and simulates its timing: bubble and peak activation\n"
      "stash per rank.");
  auto options = std::make_shared<SimulateOptions>();
  addFlags(*command, *options);
  return {command, [command, options] { return run(*command, *options); }};
}

}  // namespace strata

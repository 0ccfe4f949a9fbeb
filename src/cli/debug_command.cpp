#include "debug_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "strata/runtime/flight_recorder.h"

namespace strata {

std::vector<Subcommand> addDebugCommands(CLI::App& strata, std::ostream& out) {
  CLI::App* group = strata.add_subcommand("debug", "diagnose a job after the fact: flight");
  group->require_subcommand(1);
  CLI::App* flight = group->add_subcommand(
      "flight", "which rank of which group stopped where, from the flight recorder's files");
  flight->footer(
      "  strata debug flight /tmp/strata-flight-HOST-PID/attempt-0"
      "\n  (strata launch prints the folder when a job fails; --flight-dir chooses it)");
  auto dir = std::make_shared<std::string>();
  flight->add_option("dir", *dir, "a folder of rank-NNNNN.flight files")->required();
  return {{flight, [dir, &out] {
             out << diagnoseFlight(readFlightRecords(*dir)) << "\n";
             return 0;
           }}};
}

}  // namespace strata

#include "checkpoint_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "strata/checkpoint/checkpoint_convert.h"
#include "strata/checkpoint/inspect.h"
#include "strata/util/cli_flags.h"

namespace strata {
namespace {

struct InspectOptions {
  std::string dir;
  bool verify = false;
};

Subcommand addInspect(CLI::App& group, std::ostream& out) {
  CLI::App* command = group.add_subcommand(
      "inspect", "step, layout, model, tensors with global shapes and sizes, checksum status");
  auto o = std::make_shared<InspectOptions>();
  command->add_option("dir", o->dir, "checkpoint folder (its latest complete step) or step folder")
      ->required();
  addSwitch(*command, "verify", &o->verify, "reread every shard and check size and SHA-256");
  return {command, [o, &out] { return train::inspectCheckpoint(o->dir, o->verify, out) ? 0 : 1; }};
}

Subcommand addConvert(CLI::App& group, std::ostream& out) {
  CLI::App* command =
      group.add_subcommand("convert", "rewrite a checkpoint for another pp x dp x tp, offline");
  command->footer("  strata checkpoint convert --from run/checkpoints --to tp4/checkpoints --tp 4");
  auto o = std::make_shared<train::ConvertOptions>();
  addTextFlag(*command, "--from", &o->from, "checkpoint folder or step folder to read")->required();
  addTextFlag(*command, "--to", &o->to, "checkpoint folder to write the step into")->required();
  addIntFlag(*command, "--pp", &o->pp, "pipeline-parallel degree", 1);
  addIntFlag(*command, "--dp", &o->dp, "data-parallel degree", 1);
  addIntFlag(*command, "--tp", &o->tp, "tensor-parallel degree", 1);
  addIntFlag(*command, "--virtual-stages", &o->virtualStages, "model chunks per pipeline rank", 1);
  addTextFlag(*command, "--schedule", &o->schedule,
              "pipeline schedule of the run that will resume it (default: the source run's)");
  addOptionalIntFlag(*command, "--global-batch", &o->globalBatch,
                     "sequences per step the new layout is checked with and records",
                     "the source run's", 1);
  addOptionalIntFlag(*command, "--micro-batch", &o->microBatch,
                     "sequences per micro-batch the new layout is checked with and records",
                     "the source run's", 1);
  return {command, [o, &out] {
            o->progress = [&out](const std::string& line) { out << line << std::endl; };
            std::string written = train::convertCheckpoint(*o);
            out << "wrote " << written << "\n";
            return 0;
          }};
}

}  // namespace

std::vector<Subcommand> addCheckpointCommands(CLI::App& strata, std::ostream& out) {
  CLI::App* group = strata.add_subcommand("checkpoint", "checkpoint tools: inspect, convert");
  group->require_subcommand(1);
  return {addInspect(*group, out), addConvert(*group, out)};
}

}  // namespace strata

#include "checkpoint_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "strata/checkpoint/checkpoint_convert.h"
#include "strata/checkpoint/dcp_convert.h"
#include "strata/checkpoint/inspect.h"
#include "strata/config/config_file.h"
#include "strata/train/data_source.h"
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

// What `checkpoint convert` was given: Strata to Strata (--from, --to and a
// layout), Strata to DCP (--from, --to-dcp) or DCP to Strata (--from-dcp,
// --config, --to).
struct ConvertFlags {
  train::ConvertOptions layout;
  std::string toDcp, fromDcp, config, python;
  std::vector<CLI::Option*> layoutFlags;
};

// Exactly one source and one target, and with DCP on one side only the flags
// that side reads; FlagError otherwise.
void checkConvertFlags(const CLI::App& command, const ConvertFlags& f) {
  bool fromStrata = !f.layout.from.empty(), toStrata = !f.layout.to.empty();
  bool fromDcp = !f.fromDcp.empty(), toDcp = !f.toDcp.empty();
  if (fromStrata == fromDcp) throw flagError(command, "give one of --from and --from-dcp");
  if (toStrata == toDcp) throw flagError(command, "give one of --to and --to-dcp");
  if (fromDcp && toDcp)
    throw flagError(command, "--from-dcp and --to-dcp together: one side must be Strata's");
  if (fromDcp != !f.config.empty())
    throw flagError(command, fromDcp ? "--from-dcp needs --config, the run that will resume it"
                                     : "--config is read with --from-dcp only");
  if (!fromDcp && !toDcp && !f.python.empty())
    throw flagError(command, "--python is read with --from-dcp or --to-dcp only");
  for (const CLI::Option* flag : f.layoutFlags) {
    if (flag->count() == 0 || (!fromDcp && !toDcp)) continue;
    throw flagError(command, flag->get_name() +
                                 (fromDcp ? " with --from-dcp: the layout is --config's [parallel]"
                                          : " with --to-dcp: DCP is written whole, and "
                                            "PyTorch reshards it as it loads"));
  }
}

// Where `config`'s training data reader stands after `step` steps.
train::DataPosition dataPositionAfter(const train::TrainConfig& config, int64_t step) {
  train::DataSplit data = train::makeDataSplit(config);
  int64_t perEpoch = train::makeTrainReader(data, config, 0).batchesPerEpoch();
  return {step / perEpoch, step % perEpoch};
}

int runConvert(const ConvertFlags& f, std::ostream& out) {
  auto progress = [&out](const std::string& line) { out << line << std::endl; };
  std::string written;
  if (!f.toDcp.empty()) {
    written = train::exportToDcp({f.layout.from, f.toDcp, f.python, progress});
  } else if (!f.fromDcp.empty()) {
    written = train::importFromDcp({f.fromDcp, train::readConfigFile(f.config), f.layout.to,
                                    f.python, dataPositionAfter, progress});
  } else {
    train::ConvertOptions layout = f.layout;
    layout.progress = progress;
    written = train::convertCheckpoint(layout);
  }
  out << "wrote " << written << "\n";
  return 0;
}

Subcommand addConvert(CLI::App& group, std::ostream& out) {
  CLI::App* command = group.add_subcommand(
      "convert",
      "rewrite a checkpoint for another pp x dp x tp, or to and from PyTorch's DCP, offline");
  command->footer(
      "  strata checkpoint convert --from run/checkpoints --to tp4/checkpoints --tp 4\n"
      "  strata checkpoint convert --from run/checkpoints --to-dcp titan/step-1000\n"
      "  strata checkpoint convert --from-dcp titan/step-1000 --config run.toml --to "
      "run/checkpoints");
  auto f = std::make_shared<ConvertFlags>();
  train::ConvertOptions& o = f->layout;
  addTextFlag(*command, "--from", &o.from, "Strata checkpoint folder or step folder to read");
  addTextFlag(*command, "--to", &o.to, "Strata checkpoint folder to write the step into");
  addTextFlag(*command, "--to-dcp", &f->toDcp,
              "write a torch.distributed.checkpoint folder (torchtitan's Llama names) instead");
  addTextFlag(*command, "--from-dcp", &f->fromDcp,
              "read a torch.distributed.checkpoint folder (torchtitan's Llama names) instead");
  addTextFlag(*command, "--config", &f->config,
              "with --from-dcp: the TOML of the run that will resume (model and layout)");
  addTextFlag(*command, "--python", &f->python,
              "Python with PyTorch that reads and writes DCP; empty: $STRATA_PYTHON, else python3");
  f->layoutFlags = {
      addIntFlag(*command, "--pp", &o.pp, "pipeline-parallel degree", 1),
      addIntFlag(*command, "--dp", &o.dp, "data-parallel degree", 1),
      addIntFlag(*command, "--tp", &o.tp, "tensor-parallel degree", 1),
      addIntFlag(*command, "--virtual-stages", &o.virtualStages, "model chunks per pipeline rank",
                 1),
      addTextFlag(*command, "--schedule", &o.schedule,
                  "pipeline schedule of the run that will resume it (default: the source run's)"),
      addOptionalIntFlag(*command, "--global-batch", &o.globalBatch,
                         "sequences per step the new layout is checked with and records",
                         "the source run's", 1),
      addOptionalIntFlag(*command, "--micro-batch", &o.microBatch,
                         "sequences per micro-batch the new layout is checked with and records",
                         "the source run's", 1)};
  return {command, [f, command, &out] {
            checkConvertFlags(*command, *f);
            return runConvert(*f, out);
          }};
}

}  // namespace

std::vector<Subcommand> addCheckpointCommands(CLI::App& strata, std::ostream& out) {
  CLI::App* group = strata.add_subcommand("checkpoint", "checkpoint tools: inspect, convert");
  group->require_subcommand(1);
  return {addInspect(*group, out), addConvert(*group, out)};
}

}  // namespace strata

// `strata checkpoint convert --to-dcp / --from-dcp`: Strata checkpoints to
// and from PyTorch's torch.distributed.checkpoint (DCP), offline, in one
// process.
//
// The DCP side is torchtitan's Llama: its parameter names
// (models/llama/llama_torchtitan.h) under "model", AdamW's state as
// PyTorch's get_optimizer_state_dict gives it under "optimizer" ("state":
// exp_avg, exp_avg_sq and step by parameter name; "param_groups": the
// matrices' group with weight decay and the vectors' without), and
// "train_state": {"step"}. A PyTorch job loads it with dcp.load and
// set_model_state_dict / set_optimizer_state_dict, whatever its sharding
// (FSDP2, DTensor tensor parallel, one process).
//
// --to-dcp reads a Strata checkpoint of any layout (its whole model and
// AdamW state, as `checkpoint convert` to one process would) and writes one
// DCP folder. --from-dcp reads a DCP folder, whichever layout its job had,
// into the model that a run's config describes and writes a Strata
// checkpoint at that config's layout (pp, dp, tp, virtual stages, schedule,
// batch), which `strata train` with that config resumes: at the DCP's step,
// its AdamW moments, the learning-rate schedule and the data reader placed
// where that many steps leave them.
//
// DCP is read and written by PyTorch's own code in a Python child
// (checkpoint/dcp_bridge.h says why): `python` (empty: $STRATA_PYTHON, else
// python3) must have PyTorch 2.4 or newer. Both block until done, holding
// the whole model and its optimizer state in memory.
//
// Throws ConfigError for a model torchtitan's Llama cannot hold (not a dense
// untied Llama), a DCP folder to write that is not empty, a config that does
// not validate; CheckpointError for a DCP checkpoint that lacks one of the
// model's weights, holds weights the model has not or of another shape, has
// fields this PyTorch bridge does not know, or cannot be read or written.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "strata/checkpoint/checkpoint_convert.h"
#include "strata/config/config.h"
#include "strata/data/batch_reader.h"

namespace strata::train {

struct DcpExportOptions {
  std::string from;    // a Strata checkpoint folder (its latest complete step) or step directory
  std::string to;      // the DCP folder to write: absent or empty
  std::string python;  // with PyTorch; empty: $STRATA_PYTHON, else python3
  std::function<void(const std::string&)> progress;  // a line per stage; may be empty
};

// Returns the folder written.
std::string exportToDcp(const DcpExportOptions& options);

struct DcpImportOptions {
  std::string from;    // the DCP folder
  TrainConfig config;  // the run that will resume: its model, optimizer and layout
  std::string to;      // a Strata checkpoint folder: the result is to/step-NNNNNN
  std::string python;
  // Where `config`'s training data reader stands after `step` steps (the
  // caller knows the data; this room does not). Empty: at the start.
  std::function<DataPosition(const TrainConfig& config, int64_t step)> dataPosition;
  std::function<void(const std::string&)> progress;
};

// Returns the step directory written.
std::string importFromDcp(const DcpImportOptions& options);

}  // namespace strata::train

// torch.distributed.checkpoint (DCP) folders read and written by PyTorch's
// own DCP code, run as a child process: the bridge script
// (src/checkpoint/dcp_bridge.py, built into the binary) with a Python that
// has PyTorch 2.4 or newer.
//
// Why a Python child: a DCP folder's .metadata is a Python pickle of
// protocol 4 whose objects are torch.Size, torch.dtype and DCP's own
// dataclasses. LibTorch's Unpickler reads protocol 2 only (2.11 refuses the
// file: "Only Pickle protocol 2 is supported") and knows none of those
// classes, and its Pickler cannot write them; a parser of our own would
// track a format PyTorch changes at will. So DCP reads and writes its own
// format, and the tensors cross between the two processes as one torch.save
// archive of tensors only, which LibTorch reads and writes itself
// (torch::pickle_load / torch::pickle_save).
//
// Both calls block until the child exits (a conversion of a whole checkpoint
// takes as long as reading it) and hold the whole state in memory twice,
// once in each process. They throw CheckpointError with the bridge's own
// one-line reason (no .metadata, a field this bridge does not know, a
// Python without PyTorch) or the child's last output lines.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>

namespace strata::train {

// The bridge's flat form (dcp_bridge.py's docstring): "model/<name>",
// "exp_avg/<name>", "exp_avg_sq/<name>", "step/<name>", "group/<name>",
// "param_groups/<i>/<setting>", "train_state/step".
using FlatDcpState = std::map<std::string, at::Tensor>;

// The Python --python names, else $STRATA_PYTHON, else python3.
std::string dcpPython(const std::string& given);

FlatDcpState readDcp(const std::string& directory, const std::string& python);
void writeDcp(const FlatDcpState& state, const std::string& directory, const std::string& python);

// The script's text (generated from dcp_bridge.py).
extern const char kDcpBridgeScript[];

}  // namespace strata::train

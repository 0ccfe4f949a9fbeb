"""Strata's bridge to torch.distributed.checkpoint (DCP), run by `strata
checkpoint convert --to-dcp / --from-dcp` with the Python that has PyTorch
(src/checkpoint/dcp_bridge.h says why DCP's own code reads and writes it).
Built into the strata binary, which writes it to a temporary file and runs
it; not meant to be run by hand.

python dcp_bridge.py read DCP_DIR FLAT_PT
    Checks DCP_DIR's .metadata for fields this bridge does not know, loads
    the whole checkpoint in this one process, and writes FLAT_PT
    (torch.save, protocol 2, a dict of tensors only, as LibTorch reads it):
      model/<name>                     a weight, under the checkpoint's name
      exp_avg/<name>, exp_avg_sq/<name>, step/<name>   AdamW's state
      train_state/step                 int64, when the checkpoint has one
      param_groups/<i>/<key>           float64, each numeric setting
    Model weights are those under "model", or at the top level when the
    checkpoint keeps them there; the optimizer's state nested by parameter
    or flattened ("state.<name>.exp_avg"): both torchtitan's forms.

python dcp_bridge.py write FLAT_PT DCP_DIR
    The other way: FLAT_PT as above, plus group/<name> (int64, the
    parameter's AdamW group), written as one DCP checkpoint of this process:
    {"model": {...}, "optimizer": {"state": {...}, "param_groups": [...]},
    "train_state": {"step": N}}, the optimizer's as PyTorch's
    get_optimizer_state_dict gives it.

Exits 0 on success; 2 with one line on stderr naming the problem.
"""

import dataclasses
import os
import sys
import warnings

# Each class DCP pickles into .metadata, with the fields this bridge reads
# it by (PyTorch 2.4 to 2.11 write no others).
KNOWN_FIELDS = {
    "Metadata": {"state_dict_metadata", "planner_data", "storage_data", "storage_meta", "version"},
    "TensorStorageMetadata": {"properties", "size", "chunks"},
    "BytesStorageMetadata": set(),
    "ChunkStorageMetadata": {"offsets", "sizes"},
    "TensorProperties": {"dtype", "layout", "requires_grad", "memory_format", "pin_memory"},
    "StorageMeta": {"checkpoint_id", "save_id", "load_id", "modules"},
    "MetadataIndex": {"fqn", "offset", "index"},
    "_StorageInfo": {"relative_path", "offset", "length", "transform_descriptors"},
}
NOT_MODEL = {"optimizer", "train_state", "lr_scheduler", "dataloader"}


class BridgeError(Exception):
    pass


def unknown_fields(value, seen):
    """Class.field for every field of a DCP class that KNOWN_FIELDS lacks."""
    if id(value) in seen:
        return set()
    seen.add(id(value))
    found = set()
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        known = KNOWN_FIELDS.get(name)
        if known is None:
            return {name + " (a class)"}
        for field, inner in vars(value).items():
            if field not in known:
                found.add(name + "." + field)
            found |= unknown_fields(inner, seen)
    elif isinstance(value, dict):
        for key, inner in value.items():
            found |= unknown_fields(key, seen) | unknown_fields(inner, seen)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            found |= unknown_fields(inner, seen)
    return found


def check_metadata(directory):
    from torch.distributed.checkpoint import FileSystemReader

    if not os.path.isfile(os.path.join(directory, ".metadata")):
        raise BridgeError(f"'{directory}' is not a DCP checkpoint: it has no .metadata")
    try:
        metadata = FileSystemReader(directory).read_metadata()
    except Exception as error:  # a class or module this PyTorch lacks, a torn file
        raise BridgeError(f"cannot read '{directory}/.metadata': {error}") from error
    extra = sorted(unknown_fields(metadata, set()))
    if extra:
        raise BridgeError(
            f"'{directory}/.metadata' has fields this converter does not know: "
            + ", ".join(extra)
            + " (written by a newer PyTorch?)"
        )


def adamw_moments(optimizer):
    """{parameter name: {"exp_avg", "exp_avg_sq", "step"}} of an optimizer state
    dict as get_optimizer_state_dict gives it: nested ({"state": {name: {...}}})
    or flattened ({"state.<name>.exp_avg": ...}, torchtitan's)."""
    moments = {name: dict(fields) for name, fields in optimizer.get("state", {}).items()}
    for key, value in optimizer.items():
        if key.startswith("state."):
            name, _, field = key[len("state.") :].rpartition(".")
            moments.setdefault(name, {})[field] = value
    unread = [k for k in optimizer if k not in ("state", "param_groups") and not
              k.startswith(("state.", "param_groups."))]
    if unread:
        raise BridgeError(f"optimizer entries of a form this bridge does not read: {unread[:5]}")
    return moments


def read_dcp(directory, flat_path):
    import torch
    from torch.distributed.checkpoint import FileSystemReader
    from torch.distributed.checkpoint.default_planner import _EmptyStateDictLoadPlanner
    from torch.distributed.checkpoint.state_dict_loader import _load_state_dict

    check_metadata(directory)
    state = {}
    _load_state_dict(
        state,
        storage_reader=FileSystemReader(directory),
        planner=_EmptyStateDictLoadPlanner(),
        no_dist=True,
    )
    model = state.get("model")
    if not isinstance(model, dict):
        model = {k: v for k, v in state.items() if k not in NOT_MODEL}
    flat = {}
    for name, tensor in model.items():
        if not isinstance(tensor, torch.Tensor):
            raise BridgeError(f"model entry '{name}' is a {type(tensor).__name__}, not a tensor")
        flat["model/" + name] = tensor.contiguous()
    optimizer = state.get("optimizer", {})
    for name, moments in adamw_moments(optimizer).items():
        for key in ("exp_avg", "exp_avg_sq", "step"):
            if key not in moments:
                raise BridgeError(f"optimizer state of '{name}' has no '{key}' (not AdamW?)")
            flat[f"{key}/{name}"] = torch.as_tensor(moments[key]).contiguous()
    for index, group in enumerate(optimizer.get("param_groups", [])):
        for key, value in group.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                flat[f"param_groups/{index}/{key}"] = torch.tensor(float(value), dtype=torch.float64)
            elif key == "betas":
                flat[f"param_groups/{index}/beta1"] = torch.tensor(float(value[0]), dtype=torch.float64)
                flat[f"param_groups/{index}/beta2"] = torch.tensor(float(value[1]), dtype=torch.float64)
    step = state.get("train_state", {}).get("step")
    if step is not None:
        flat["train_state/step"] = torch.tensor(int(step), dtype=torch.int64)
    torch.save(flat, flat_path)


def write_dcp(flat_path, directory):
    import torch
    import torch.distributed.checkpoint as dcp
    import torch.jit._pickle

    # LibTorch's pickler tags the dict's key and value types with a call of
    # restore_type_tag: the one global the file needs beyond tensors.
    with torch.serialization.safe_globals([torch.jit._pickle.restore_type_tag]):
        flat = torch.load(flat_path, weights_only=True)
    model, state, groups = {}, {}, {}
    settings = {}
    for key, value in flat.items():
        kind, _, name = key.partition("/")
        if kind == "model":
            model[name] = value
        elif kind in ("exp_avg", "exp_avg_sq", "step"):
            state.setdefault(name, {})[kind] = value
        elif kind == "group":
            groups.setdefault(int(value), []).append(name)
        elif kind == "param_groups":
            index, _, setting = name.partition("/")
            settings.setdefault(int(index), {})[setting] = value.item()
    defaults = torch.optim.AdamW([torch.zeros(1)]).defaults
    param_groups = []
    for index in sorted(groups):
        group = dict(defaults)
        s = settings.get(index, {})
        group.update({k: v for k, v in s.items() if k not in ("beta1", "beta2")})
        group["betas"] = (s.get("beta1", group["betas"][0]), s.get("beta2", group["betas"][1]))
        group["params"] = groups[index]
        param_groups.append(group)
    checkpoint = {"model": model, "optimizer": {"state": state, "param_groups": param_groups}}
    if "train_state/step" in flat:
        checkpoint["train_state"] = {"step": int(flat["train_state/step"].item())}
    dcp.save(checkpoint, storage_writer=dcp.FileSystemWriter(directory), no_dist=True)


def main(argv):
    if len(argv) != 4 or argv[1] not in ("read", "write"):
        raise BridgeError("usage: dcp_bridge.py read DCP_DIR FLAT_PT | write FLAT_PT DCP_DIR")
    try:
        import torch
    except ImportError as error:
        raise BridgeError(f"{sys.executable} has no PyTorch ({error})") from error
    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    if (major, minor) < (2, 4):
        raise BridgeError(f"PyTorch {torch.__version__} is older than 2.4, the first this bridge reads")
    warnings.filterwarnings("ignore")  # DCP warns that no process group is set up
    (read_dcp if argv[1] == "read" else write_dcp)(argv[2], argv[3])


if __name__ == "__main__":
    try:
        main(sys.argv)
    except BridgeError as error:
        print(error, file=sys.stderr)
        sys.exit(2)

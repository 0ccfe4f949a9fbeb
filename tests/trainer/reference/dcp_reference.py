"""The PyTorch side of the DcpInterop.* tests (tests/trainer/
dcp_interop_test.cpp): a Llama written the way torchtitan writes its
Llama 3 (torchtitan's parameter names, rotary embedding on adjacent pairs
through complex numbers), trained with FSDP2 and saved and loaded with
torch.distributed.checkpoint (DCP), so that Strata's `checkpoint convert
--from-dcp / --to-dcp` meets PyTorch's own checkpoints. CPU and Gloo only.

The model is written here, not taken from Strata: its rotary pairs are
ordered as torchtitan's, not as Strata's (Hugging Face's halves), so a
conversion that forgot to reorder q and k would fail the tests.

CONFIG is a JSON object: layers, hidden, heads, kv_heads, ffn, vocab,
rope_theta, rms_norm_eps, and AdamW's lr, min_lr, warmup_steps, steps,
weight_decay, beta1, beta2, eps, grad_clip (Strata's schedule: linear
warmup, then cosine decay to min_lr at `steps`).

python dcp_reference.py fsdp-train CONFIG BATCHES SAVE_AFTER OUT_DIR
    BATCHES: a torch.save'd dict {"input", "target"} of [steps, batch, seq]
    int64. Two processes train the model (seeded, its own initial weights)
    under fully_shard, one global batch a step (each rank half of it, the
    mean loss over the whole batch, clipped at grad_clip, two AdamW groups:
    matrices decay, vectors do not), save OUT_DIR/dcp after SAVE_AFTER steps
    as torchtitan does ({"model", "optimizer", "train_state": {"step"}}),
    and train on to the last batch. OUT_DIR/losses.json: every step's loss.

python dcp_reference.py load-and-step CONFIG DCP_DIR BATCHES STEP OUT_DIR
    One process: a model and AdamW as above, loaded from DCP_DIR with
    dcp.load and set_model_state_dict / set_optimizer_state_dict; writes
    OUT_DIR/logits.pt (the logits of batch STEP's input, before any step)
    and OUT_DIR/stepped.pt (every parameter by torchtitan's name after one
    optimizer step on batch STEP) and OUT_DIR/step.json (the loaded
    train_state step and that step's loss).

python dcp_reference.py flatten DCP_DIR OUT_DIR
    The checkpoint again in torchtitan's flattened form: the model's weights
    at the top level, the optimizer's state flattened ("state.<name>.exp_avg",
    get_optimizer_state_dict's flatten_optimizer_state_dict).

python dcp_reference.py same DCP_A DCP_B
    Exits 1 naming the first entry whose tensors differ, or that one lacks.

python dcp_reference.py add-field DCP_DIR FIELD
    Adds FIELD to the checkpoint's Metadata, as a newer PyTorch with a field
    this one lacks would write it.
"""

import json
import math
import os
import pickle
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)


def rotary_table(head_dim, seq, theta):
    """[seq, head_dim / 2] complex: position p turns pair i by p * theta^(-2i/d)."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(seq).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles)


def rotate(x, table):
    """x [b, s, heads, head_dim], each adjacent pair (2i, 2i+1) one complex number."""
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    turned = pairs * table[: x.shape[1]].view(1, x.shape[1], 1, -1)
    return torch.view_as_real(turned).flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.kv_heads = c["heads"], c["kv_heads"]
        self.head_dim = c["hidden"] // c["heads"]
        self.wq = nn.Linear(c["hidden"], self.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.heads * self.head_dim, c["hidden"], bias=False)

    def forward(self, x, table):
        b, s, _ = x.shape
        q = rotate(self.wq(x).view(b, s, self.heads, self.head_dim), table)
        k = rotate(self.wk(x).view(b, s, self.kv_heads, self.head_dim), table)
        v = self.wv(x).view(b, s, self.kv_heads, self.head_dim)
        repeat = self.heads // self.kv_heads
        k = k.repeat_interleave(repeat, dim=2)
        v = v.repeat_interleave(repeat, dim=2)
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        return self.wo(out.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.w1 = nn.Linear(c["hidden"], c["ffn"], bias=False)
        self.w2 = nn.Linear(c["ffn"], c["hidden"], bias=False)
        self.w3 = nn.Linear(c["hidden"], c["ffn"], bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention_norm = nn.RMSNorm(c["hidden"], eps=c["rms_norm_eps"])
        self.attention = Attention(c)
        self.ffn_norm = nn.RMSNorm(c["hidden"], eps=c["rms_norm_eps"])
        self.feed_forward = FeedForward(c)

    def forward(self, x, table):
        x = x + self.attention(self.attention_norm(x), table)
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, c, seq):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleDict({str(i): Block(c) for i in range(c["layers"])})
        self.norm = nn.RMSNorm(c["hidden"], eps=c["rms_norm_eps"])
        self.output = nn.Linear(c["hidden"], c["vocab"], bias=False)
        table = rotary_table(c["hidden"] // c["heads"], seq, c["rope_theta"])
        self.register_buffer("rotary", table, persistent=False)
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.1)

    def forward(self, ids):
        x = self.tok_embeddings(ids)
        for block in self.layers.values():
            x = block(x, self.rotary)
        return self.output(self.norm(x))


def learning_rate(c, step):
    if step < c["warmup_steps"]:
        return c["lr"] * (step + 1) / c["warmup_steps"]
    if step >= c["steps"]:
        return c["min_lr"]
    progress = (step - c["warmup_steps"]) / (c["steps"] - c["warmup_steps"])
    return c["min_lr"] + (c["lr"] - c["min_lr"]) * 0.5 * (1 + math.cos(math.pi * progress))


def adamw(model, c):
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    groups = [
        {"params": matrices, "weight_decay": c["weight_decay"]},
        {"params": vectors, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(
        groups, lr=c["lr"], betas=(c["beta1"], c["beta2"]), eps=c["eps"], foreach=False
    )


def mean_loss(model, ids, targets):
    logits = model(ids)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


def train_step(model, optimizer, c, step, ids, targets):
    for group in optimizer.param_groups:
        group["lr"] = learning_rate(c, step)
    loss = mean_loss(model, ids, targets)
    loss.backward()
    if c["grad_clip"] > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), c["grad_clip"])
    optimizer.step()
    optimizer.zero_grad()
    return loss


def fsdp_rank(rank, config_path, batches_path, save_after, out_dir, port):
    from torch.distributed.fsdp import fully_shard

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.set_num_threads(1)
    c = json.load(open(config_path))
    batches = torch.load(batches_path, weights_only=False)  # written by LibTorch: typed dict
    torch.manual_seed(c.get("seed", 7))
    model = Transformer(c, batches["input"].shape[2])
    for block in model.layers.values():
        fully_shard(block)
    fully_shard(model)
    optimizer = adamw(model, c)
    half = batches["input"].shape[1] // 2
    losses = []
    for step in range(batches["input"].shape[0]):
        if step == save_after:
            state = {
                "model": get_model_state_dict(model),
                "optimizer": get_optimizer_state_dict(model, optimizer),
                "train_state": {"step": step},
            }
            dcp.save(state, checkpoint_id=os.path.join(out_dir, "dcp"))
        mine = slice(rank * half, (rank + 1) * half)
        loss = train_step(
            model, optimizer, c, step, batches["input"][step, mine], batches["target"][step, mine]
        )
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / 2)
    if rank == 0:
        with open(os.path.join(out_dir, "losses.json"), "w") as f:
            json.dump(losses, f)
    # Both ranks done, each leaves without tearing Gloo down: its teardown
    # aborted one run in five here ("terminate called without an active
    # exception"), after everything was written.
    dist.barrier()
    os._exit(0)


def fsdp_train(config_path, batches_path, save_after, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mp.spawn(
        fsdp_rank, args=(config_path, batches_path, int(save_after), out_dir, port), nprocs=2
    )


def load_and_step(config_path, dcp_dir, batches_path, step, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    c = json.load(open(config_path))
    batches = torch.load(batches_path, weights_only=False)  # written by LibTorch: typed dict
    step = int(step)
    model = Transformer(c, batches["input"].shape[2])
    optimizer = adamw(model, c)
    state = {
        "model": get_model_state_dict(model),
        "optimizer": get_optimizer_state_dict(model, optimizer),
        "train_state": {"step": -1},
    }
    dcp.load(state, checkpoint_id=dcp_dir)
    set_model_state_dict(model, state["model"])
    set_optimizer_state_dict(model, optimizer, state["optimizer"])
    ids, targets = batches["input"][step], batches["target"][step]
    with torch.no_grad():
        torch.save(model(ids), os.path.join(out_dir, "logits.pt"))
    loss = train_step(model, optimizer, c, step, ids, targets)
    stepped = {name: p.detach().clone() for name, p in model.named_parameters()}
    torch.save(stepped, os.path.join(out_dir, "stepped.pt"))
    report = {"step": state["train_state"]["step"], "loss": loss.item()}
    json.dump(report, open(os.path.join(out_dir, "step.json"), "w"))


def load_whole(dcp_dir):
    from torch.distributed.checkpoint.default_planner import _EmptyStateDictLoadPlanner
    from torch.distributed.checkpoint.state_dict_loader import _load_state_dict

    state = {}
    _load_state_dict(
        state,
        storage_reader=dcp.FileSystemReader(dcp_dir),
        planner=_EmptyStateDictLoadPlanner(),
        no_dist=True,
    )
    return state


def flatten(dcp_dir, out_dir):
    state = load_whole(dcp_dir)
    flat = dict(state.pop("model"))
    optimizer = {}
    for name, fields in state["optimizer"]["state"].items():
        for field, value in fields.items():
            optimizer[f"state.{name}.{field}"] = value
    for group in state["optimizer"]["param_groups"]:
        for name in group["params"]:
            for key, value in group.items():
                if key != "params":
                    optimizer[f"param_groups.{name}.{key}"] = value
    flat["optimizer"] = optimizer
    flat["train_state"] = state["train_state"]
    dcp.save(flat, storage_writer=dcp.FileSystemWriter(out_dir), no_dist=True)


def tensors_of(state, prefix=""):
    found = {}
    for key, value in state.items():
        if isinstance(value, dict):
            found.update(tensors_of(value, f"{prefix}{key}."))
        elif isinstance(value, torch.Tensor):
            found[prefix + key] = value
    return found


def same(dcp_a, dcp_b):
    a, b = tensors_of(load_whole(dcp_a)), tensors_of(load_whole(dcp_b))
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b or not torch.equal(a[key], b[key]):
            sys.exit(f"'{key}' differs between {dcp_a} and {dcp_b}")
    print(f"{len(a)} tensors equal")


def add_field(dcp_dir, field):
    path = os.path.join(dcp_dir, ".metadata")
    with open(path, "rb") as f:
        metadata = pickle.load(f)
    setattr(metadata, field, 1)
    with open(path, "wb") as f:
        pickle.dump(metadata, f)


if __name__ == "__main__":
    commands = {
        "fsdp-train": fsdp_train,
        "load-and-step": load_and_step,
        "flatten": flatten,
        "same": same,
        "add-field": add_field,
    }
    commands[sys.argv[1]](*sys.argv[2:])

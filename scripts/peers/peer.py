"""The PyTorch side of bench_peers: one rank of a parallel form of PyTorch's
own, training the Llama of llama.py on CPU with Gloo, launched by the C++
benchmark once per rank with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
OMP_NUM_THREADS=1, as it launches Strata's ranks.

python peer.py FORM CONFIG WEIGHTS BATCHES OUT_DIR WARMUP STEPS

FORM is one of
  ddp                  DistributedDataParallel (gradient_as_bucket_view)
  fsdp2                fully_shard on every block and the root (ZeRO-3:
                       reshard_after_forward, PyTorch's default prefetch)
  tp                   DTensor's parallelize_module, torchtitan's Llama plan:
                       colwise q, k, v, gate, up; rowwise o, down; sequence
                       parallel norms; a vocabulary-parallel head with
                       loss_parallel
  deepspeed-zero2, deepspeed-zero3
                       DeepSpeed's engine (PyPI's deepspeed, its CPU
                       accelerator, Gloo) with ZeRO stage 2 or 3 around
                       PyTorch's AdamW
  cp                   context_parallel (torchtitan's way: the batch, targets
                       and rotary tables cut along the sequence, FSDP2 over
                       the cp ranks)
  pp-1f1b, pp-interleaved-1f1b, pp-zb-v, pp-dualpipe-v
                       torch.distributed.pipelining: Schedule1F1B,
                       ScheduleInterleaved1F1B, ScheduleZBVZeroBubble,
                       ScheduleDualPipeV over WORLD_SIZE ranks (two stages a
                       rank but for 1F1B), CONFIG's micro_batch sequences a
                       micro-batch
CONFIG is a JSON object of the model and training (bench_peers writes it),
WEIGHTS the initial weights as Strata exports them (Hugging Face names),
BATCHES a LibTorch-written dict {"input", "target"} of [steps, batch, seq].
Trains WARMUP + STEPS global batches; writes OUT_DIR/pytorch-rank-R.json:
{"seconds": the timed steps' wall time, "steps", "losses": every step's mean
loss (on the ranks that see it), "max_rss_bytes", "setting"}.
"""

import json
import os
import resource
import sys
import time

import torch
import torch.distributed as dist
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import Llama, adamw, next_token_loss  # noqa: E402


def data_parallel(form, c, weights, mesh):
    model = Llama(c, c["seq_len"])
    model.load_hugging_face(weights)
    if form == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        # Gradients live in the buckets: no copy into them after backward.
        return DistributedDataParallel(model, gradient_as_bucket_view=True), "gradient_as_bucket_view"
    from torch.distributed.fsdp import fully_shard

    for block in model.layers.values():
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, "fully_shard per block and root, reshard_after_forward=True"


def deepspeed_engine(form, c, weights, ranks):
    import deepspeed

    model = Llama(c, c["seq_len"])
    model.load_hugging_face(weights)
    stage = int(form[-1])
    config = {
        "train_micro_batch_size_per_gpu": c["global_batch"] // ranks,
        "gradient_accumulation_steps": 1,
        "zero_optimization": {"stage": stage},
        "zero_allow_untested_optimizer": True,  # PyTorch's AdamW, the same as every other row's
        "fp16": {"enabled": False},
        "bf16": {"enabled": False},
        "steps_per_print": 1000000,
    }
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=adamw(model, c), config=config)
    return engine, f"deepspeed {deepspeed.__version__}, ZeRO stage {stage}, its defaults"


def context_parallel_model(c, weights, mesh):
    from torch.distributed.fsdp import fully_shard

    model = Llama(c, c["seq_len"])
    model.load_hugging_face(weights)
    for block in model.layers.values():
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, "context_parallel, FSDP2 over the cp ranks"


def context_parallel_loss(model, mesh, ids, targets):
    """The mean loss of this rank's share of every sequence, its gradients kept."""
    from torch.distributed.tensor.experimental import context_parallel

    ids, targets = ids.clone(), targets.clone()
    tables = [b for name, b in model.named_buffers() if name.endswith(("cos", "sin"))]
    with context_parallel(
        mesh,
        buffers=[ids, targets, *tables],
        buffer_seq_dims=[1, 1] + [0] * len(tables),
        no_restore_buffers={ids, targets},
    ):
        loss = next_token_loss(model(ids), targets)
        loss.backward()
    return loss


def tensor_parallel(c, weights, mesh):
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        PrepareModuleInput,
        RowwiseParallel,
        SequenceParallel,
        parallelize_module,
    )

    model = Llama(c, c["seq_len"])
    model.load_hugging_face(weights)
    parallelize_module(
        model,
        mesh,
        {
            "embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
            "norm": SequenceParallel(),
            "lm_head": ColwiseParallel(
                input_layouts=Shard(1), output_layouts=Shard(-1), use_local_output=False
            ),
        },
    )
    for block in model.layers.values():
        parallelize_module(
            block,
            mesh,
            {
                "input_layernorm": SequenceParallel(),
                "self_attn": PrepareModuleInput(
                    input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)
                ),
                "self_attn.q_proj": ColwiseParallel(),
                "self_attn.k_proj": ColwiseParallel(),
                "self_attn.v_proj": ColwiseParallel(),
                "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1)),
                "post_attention_layernorm": SequenceParallel(),
                "mlp": PrepareModuleInput(
                    input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)
                ),
                "mlp.gate_proj": ColwiseParallel(),
                "mlp.up_proj": ColwiseParallel(),
                "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1)),
            },
        )
    return model, "torchtitan's plan, sequence parallel, loss_parallel"


# Stage s of p pipeline ranks' stages: which rank holds it.
def stages_of_rank(schedule, rank, ranks):
    if schedule == "1f1b":
        return [rank]
    if schedule == "interleaved-1f1b":
        return [rank, rank + ranks]
    return [rank, 2 * ranks - 1 - rank]  # a V: down the ranks, then back up


def even_blocks(layers, stages, s):
    per, extra = divmod(layers, stages)
    start = s * per + min(s, extra)
    return range(start, start + per + (1 if s < extra else 0))


def skip_self_sends_at_init(pp):
    """PyTorch 2.11's schedules open every stage's links with a send and a
    receive to each neighbouring stage, also where a V puts two neighbours on
    one rank; Gloo cannot send to its own rank ("Pair is not connected"), NCCL
    can. Those links carry nothing the schedule uses (same-rank stages hand
    their tensors over in memory), so they are left out."""
    stage_class = pp.stage._PipelineStageBase
    original = stage_class._get_init_p2p_neighbors_ops

    def without_self(stage):
        me = stage.group_rank
        return [op for op in original(stage) if op.group_peer != me]

    stage_class._get_init_p2p_neighbors_ops = without_self


def pipeline(schedule, c, weights, rank, ranks):
    from torch.distributed import pipelining as pp

    if schedule in ("zb-v", "dualpipe-v"):
        skip_self_sends_at_init(pp)

    count = ranks if schedule == "1f1b" else 2 * ranks
    stages, modules = [], []
    for s in stages_of_rank(schedule, rank, ranks):
        module = Llama(c, c["seq_len"], even_blocks(c["layers"], count, s), s == 0, s == count - 1)
        module.load_hugging_face(weights)
        modules.append(module)
        stages.append(pp.PipelineStage(module, s, count, torch.device("cpu")))
    micro = c["global_batch"] // c["micro_batch"]
    kind = {
        "1f1b": pp.Schedule1F1B,
        "interleaved-1f1b": pp.ScheduleInterleaved1F1B,
        "zb-v": pp.ScheduleZBVZeroBubble,
        "dualpipe-v": pp.ScheduleDualPipeV,
    }[schedule]
    runner = kind(stages[0] if schedule == "1f1b" else stages, micro, loss_fn=next_token_loss)
    holds_first = any(st.is_first for st in stages)
    holds_last = any(st.is_last for st in stages)
    setting = kind.__name__
    if schedule in ("zb-v", "dualpipe-v"):
        setting += ", its self-sends at start left out (Gloo cannot send to its own rank)"
    return modules, runner, holds_first, holds_last, setting


class Peer:
    """A form's model(s), optimizer and step."""

    def __init__(self, form, c, weights):
        from torch.distributed.device_mesh import init_device_mesh

        self.form, self.c = form, c
        self.rank, self.ranks = dist.get_rank(), dist.get_world_size()
        self.mesh = mesh = init_device_mesh("cpu", (self.ranks,))
        self.holds_first = self.holds_last = True
        if form.startswith("deepspeed"):
            self.engine, self.setting = deepspeed_engine(form, c, weights, self.ranks)
            self.modules = []
        elif form == "cp":
            model, self.setting = context_parallel_model(c, weights, mesh)
            self.modules = [model]
        elif form in ("ddp", "fsdp2"):
            model, self.setting = data_parallel(form, c, weights, mesh)
            self.modules = [model]
        elif form == "tp":
            model, self.setting = tensor_parallel(c, weights, mesh)
            self.modules = [model]
        else:
            self.modules, self.runner, self.holds_first, self.holds_last, self.setting = pipeline(
                form[3:], c, weights, self.rank, self.ranks
            )
        self.optimizers = [adamw(m, c) for m in self.modules]

    def step(self, ids, targets):
        """One global batch; the mean loss where this rank sees it, else None."""
        if self.form.startswith("deepspeed"):
            part = ids.shape[0] // self.ranks
            mine = slice(self.rank * part, (self.rank + 1) * part)
            loss = next_token_loss(self.engine(ids[mine]), targets[mine])
            self.engine.backward(loss)
            self.engine.step()  # steps DeepSpeed's optimizer and zeroes its gradients
            mean = loss.detach().clone()
            dist.all_reduce(mean, op=dist.ReduceOp.AVG)
            return mean.item()
        if self.form in ("ddp", "fsdp2", "cp"):
            if self.form == "cp":
                loss = context_parallel_loss(self.modules[0], self.mesh, ids, targets)
            else:
                part = ids.shape[0] // self.ranks
                mine = slice(self.rank * part, (self.rank + 1) * part)
                loss = next_token_loss(self.modules[0](ids[mine]), targets[mine])
                loss.backward()
            mean = loss.detach().clone()
            dist.all_reduce(mean, op=dist.ReduceOp.AVG)
            result = mean.item()
        elif self.form == "tp":
            from torch.distributed.tensor.parallel import loss_parallel

            logits = self.modules[0](ids)
            with loss_parallel():
                loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
                loss.backward()
            result = loss.full_tensor().item() if hasattr(loss, "full_tensor") else loss.item()
        else:
            losses = []
            args = (ids,) if self.holds_first else ()
            kwargs = {"target": targets, "losses": losses} if self.holds_last else {}
            self.runner.step(*args, **kwargs)
            result = torch.stack(losses).mean().item() if losses else None
        for optimizer in self.optimizers:
            optimizer.step()
            optimizer.zero_grad()
        return result


def main(form, config, weights_path, batches_path, out_dir, warmup, steps):
    torch.set_num_threads(1)
    if form.startswith("deepspeed"):
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
        import deepspeed

        deepspeed.init_distributed(dist_backend="gloo")
    else:
        dist.init_process_group("gloo")
    c = json.load(open(config))
    batches = torch.load(batches_path, weights_only=False)  # LibTorch's: a typed dict
    peer = Peer(form, c, load_file(weights_path))
    warmup, steps = int(warmup), int(steps)
    losses = []
    for step in range(warmup + steps):
        if step == warmup:
            dist.barrier()
            start = time.perf_counter()
        losses.append(peer.step(batches["input"][step], batches["target"][step]))
    seconds = time.perf_counter() - start
    result = {
        "seconds": seconds,
        "steps": steps,
        "losses": losses if None not in losses else [],
        "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "setting": peer.setting,
        "torch": torch.__version__,
    }
    with open(os.path.join(out_dir, f"pytorch-rank-{peer.rank}.json"), "w") as out:
        json.dump(result, out)
    # Leave together, then skip the interpreter's teardown of the Gloo group,
    # which was seen to spin once the peer had gone.
    dist.barrier()
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:])

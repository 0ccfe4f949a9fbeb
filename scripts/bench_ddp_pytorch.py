#!/usr/bin/python3
"""PyTorch's own DistributedDataParallel, the peer of bench_dp_vs_pytorch.

The C++ benchmark launches this script once per rank, with RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT and OMP_NUM_THREADS=1 set the way it sets them for its
own ranks, and the same model, batch, optimizer, thread count and backend
(Gloo). Rank 0 writes the seconds per step (the slowest rank's) to --out.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def build_mlp(widths):
    layers = []
    for i in range(len(widths) - 1):
        if i > 0:
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
    return torch.nn.Sequential(*layers)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--widths", required=True, help="e.g. 512,1024,1024,512")
    parser.add_argument("--batch", type=int, required=True, help="rows per rank per step")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=4, help="steps per round")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(1)
    model = DistributedDataParallel(build_mlp(widths))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(2 + rank)
    inputs = torch.randn(args.batch, widths[0])
    targets = torch.randn(args.batch, widths[-1])

    def step():
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()

    def seconds_per_step(steps):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        seconds = torch.tensor([(time.perf_counter() - start) / steps], dtype=torch.float64)
        dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
        return seconds.item()

    seconds_per_step(args.warmup)
    total = sum(seconds_per_step(args.steps) for _ in range(args.rounds))
    if rank == 0:
        with open(args.out, "w") as out:
            out.write(f"{total / args.rounds:.6f}\n")
    # Every rank has its number; leave together, then skip the interpreter's
    # teardown of the Gloo group, which was seen to spin forever once the
    # peer had gone.
    dist.barrier()
    os._exit(0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The GPT training step of bench_train, written in plain Python PyTorch.

The C++ benchmark runs this script between its own timing rounds, with the
same model shape, batch, sequence length, optimizer settings and one thread,
and compares the seconds per step. The model is Strata's GPT (models/gpt.h)
with the same math in the same order, op for op, on one process:

  ids [b, s] -> token + learned position embeddings -> x [s, b, h]
  block: x = x + proj(attention(ln1(x)));  x = x + fc2(gelu(fc1(ln2(x))))
  attention: one fused QKV product, features ordered [heads, 3, head_dim];
             causal softmax(Q K^T / sqrt(d)) V written by hand, as Strata computes
             it on the CPU in float32 (src/ops/causal_self_attention.cpp)
  head: final layer norm, logits = x W^T (W the token embedding when tied)
  loss: mean next-token cross-entropy
  step: backward, clip the global gradient norm, AdamW with weight decay on
        matrices only

The output projections add their bias after the product, as Strata's
row-parallel layers do. Writes "<seconds per step> <last loss>" to --out
and prints one JSON line.
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden, bias=False)
        self.proj_bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x):
        s, b, _ = x.shape
        fused = self.qkv(x)  # [s, b, 3h], features [heads, 3, d]
        split = fused.view(s, b, self.heads, 3, self.head_dim).permute(3, 1, 2, 0, 4)
        q, k, v = split[0], split[1], split[2]  # [b, heads, s, d]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        future = torch.ones(s, s, dtype=torch.bool).triu(1)  # j > i is hidden from i
        probs = torch.softmax(scores.masked_fill(future, float("-inf")), -1)
        heads = torch.matmul(probs, v)  # [b, heads, s, d]
        merged = heads.permute(2, 0, 1, 3).reshape(s, b, self.heads * self.head_dim)
        return self.proj(merged) + self.proj_bias


class Mlp(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden, bias=False)
        self.fc2_bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x))) + self.fc2_bias


class Block(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attention = Attention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.mlp = Mlp(hidden, ffn)

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.tokens = nn.Embedding(a.vocab, a.hidden)
        self.positions = nn.Parameter(torch.randn(a.context, a.hidden) * 0.02)
        self.blocks = nn.ModuleList(Block(a.hidden, a.heads, a.ffn) for _ in range(a.layers))
        self.norm = nn.LayerNorm(a.hidden)
        self.lm_head = None if a.tied else nn.Linear(a.hidden, a.vocab, bias=False)
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02)
            elif "ln" not in name and "norm" not in name:
                nn.init.zeros_(p)

    def forward(self, ids):  # ids [b, s] -> logits [s, b, vocab]
        s = ids.shape[1]
        x = self.tokens(ids.t().contiguous()) + self.positions[:s].unsqueeze(1)
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        if self.lm_head is None:
            return torch.matmul(x, self.tokens.weight.t())
        return self.lm_head(x)


def adamw(model, a):
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    groups = [
        {"params": matrices, "weight_decay": a.weight_decay},
        {"params": vectors, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=a.lr, betas=(a.beta1, a.beta2), eps=a.eps)


def train_step(model, optimizer, generator, a):
    window = torch.randint(a.vocab, (a.batch, a.seq + 1), generator=generator)
    ids, targets = window[:, :-1].contiguous(), window[:, 1:].contiguous()  # [b, s]
    logits = model(ids)  # [s, b, vocab]
    loss = F.cross_entropy(logits.reshape(-1, a.vocab), targets.t().reshape(-1))
    loss.backward()
    if a.grad_clip > 0:
        nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("layers", 4), ("hidden", 512), ("heads", 8), ("ffn", 2048),
                          ("vocab", 256), ("context", 128), ("tied", 0), ("batch", 8),
                          ("seq", 128), ("seed", 1234), ("warmup", 1), ("steps", 3)]:
        parser.add_argument("--" + name, type=int, default=default)
    for name, default in [("lr", 1e-3), ("beta1", 0.9), ("beta2", 0.95), ("eps", 1e-8),
                          ("weight-decay", 0.1), ("grad-clip", 1.0)]:
        parser.add_argument("--" + name, type=float, default=default)
    parser.add_argument("--out", help="file for '<seconds per step> <last loss>'")
    return parser.parse_args()


def main():
    a = parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    model = Gpt(a)
    optimizer = adamw(model, a)
    generator = torch.Generator().manual_seed(a.seed)
    for _ in range(a.warmup):
        train_step(model, optimizer, generator, a)
    start = time.perf_counter()
    for _ in range(a.steps):
        loss = train_step(model, optimizer, generator, a)
    seconds = (time.perf_counter() - start) / a.steps
    if a.out:
        with open(a.out, "w") as out:
            out.write(f"{seconds!r} {loss!r}\n")
    print(json.dumps({"script": "bench_train_pytorch", "step_s": seconds, "loss": loss}))


if __name__ == "__main__":
    main()

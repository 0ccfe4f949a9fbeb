#!/usr/bin/env python3
"""bench_gpu's training step in PyTorch eager Python, on one GPU.

bench_gpu runs this script after timing Strata, with the same model shape,
batch, sequence length and optimizer settings. The model is Strata's GPT
(models/gpt.h), as in scripts/bench_train_pytorch.py, with what a PyTorch
user writes for a GPU: bf16 autocast over float32 weights,
F.scaled_dot_product_attention (causal; flash attention on Hopper), the loss
in float32, global gradient-norm clipping and torch.optim.AdamW with its
default CUDA implementation (foreach), weight decay on matrices only.

Writes "<seconds per step> <last loss> <peak allocated bytes>" to --out and
prints one JSON line. Timing: `warmup` untimed steps, then `steps` timed ones
closed by torch.cuda.synchronize().
"""
import argparse
import json
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
        heads = F.scaled_dot_product_attention(split[0], split[1], split[2], is_causal=True)
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
        self.lm_head = nn.Linear(a.hidden, a.vocab, bias=False)
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
        return self.lm_head(self.norm(x))


def adamw(model, a):
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    groups = [
        {"params": matrices, "weight_decay": a.weight_decay},
        {"params": vectors, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=a.lr, betas=(a.beta1, a.beta2), eps=a.eps)


def train_step(model, optimizer, generator, a):
    window = torch.randint(a.vocab, (a.batch, a.seq + 1), generator=generator, device="cuda")
    ids, targets = window[:, :-1].contiguous(), window[:, 1:].contiguous()  # [b, s]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(ids)  # [s, b, vocab], bf16
    loss = F.cross_entropy(logits.float().reshape(-1, a.vocab), targets.t().reshape(-1))
    loss.backward()
    if a.grad_clip > 0:
        nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
    optimizer.step()
    optimizer.zero_grad()
    return loss


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("layers", 20), ("hidden", 2048), ("heads", 16), ("ffn", 8192),
                          ("vocab", 50304), ("context", 1024), ("batch", 16), ("seq", 1024),
                          ("seed", 1234), ("warmup", 2), ("steps", 5)]:
        parser.add_argument("--" + name, type=int, default=default)
    for name, default in [("lr", 3e-4), ("beta1", 0.9), ("beta2", 0.95), ("eps", 1e-8),
                          ("weight-decay", 0.1), ("grad-clip", 1.0)]:
        parser.add_argument("--" + name, type=float, default=default)
    parser.add_argument("--out", help="file for '<seconds per step> <last loss> <peak bytes>'")
    return parser.parse_args()


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench_gpu_pytorch: no CUDA device")
    torch.manual_seed(a.seed)
    with torch.device("cuda"):
        model = Gpt(a)
    optimizer = adamw(model, a)
    generator = torch.Generator(device="cuda").manual_seed(a.seed)
    for _ in range(a.warmup):
        train_step(model, optimizer, generator, a)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(a.steps):
        loss = train_step(model, optimizer, generator, a)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / a.steps
    loss = loss.item()
    peak = torch.cuda.max_memory_allocated()
    if a.out:
        with open(a.out, "w") as out:
            out.write(f"{seconds!r} {loss!r} {peak}\n")
    print(json.dumps({"script": "bench_gpu_pytorch", "step_s": seconds, "loss": loss,
                      "peak_bytes": peak}))


if __name__ == "__main__":
    main()

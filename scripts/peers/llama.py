"""The Llama that the PyTorch peers of bench_peers train: the model Strata's
"llama" family computes (RMSNorm, rotary embedding on each head's halves,
grouped-query attention, SwiGLU, no biases, an untied head), written plainly
in the way torchtitan writes its Llama 3, under Hugging Face's parameter
names so that it loads the initial weights Strata exports.

Attention reads its head count from its input (view(b, s, -1, d)), so a
tensor-parallel rank that holds some of the heads runs it unchanged.
"""

import torch
import torch.nn.functional as F
from torch import nn


def rotary_tables(head_dim, seq, theta):
    """cos and sin [seq, head_dim]: position p turns features i and i + d/2 by p * theta^(-2i/d)."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(seq).float(), freqs)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def rotate(x, cos, sin):
    """x [b, s, heads, d]: each head's halves turned as one complex number."""
    first, second = x.chunk(2, dim=-1)
    turned = torch.cat([-second, first], dim=-1)
    return x * cos[None, :, None, :] + turned * sin[None, :, None, :]


class Attention(nn.Module):
    def __init__(self, c, seq):
        super().__init__()
        self.head_dim = c["hidden"] // c["heads"]
        self.groups = c["heads"] // c["kv_heads"]
        self.q_proj = nn.Linear(c["hidden"], c["heads"] * self.head_dim, bias=False)
        self.k_proj = nn.Linear(c["hidden"], c["kv_heads"] * self.head_dim, bias=False)
        self.v_proj = nn.Linear(c["hidden"], c["kv_heads"] * self.head_dim, bias=False)
        self.o_proj = nn.Linear(c["heads"] * self.head_dim, c["hidden"], bias=False)
        cos, sin = rotary_tables(self.head_dim, seq, c["rope_theta"])
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x):
        b, s, _ = x.shape
        cos, sin = self.cos[:s], self.sin[:s]
        q = rotate(self.q_proj(x).view(b, s, -1, self.head_dim), cos, sin)
        k = rotate(self.k_proj(x).view(b, s, -1, self.head_dim), cos, sin)
        v = self.v_proj(x).view(b, s, -1, self.head_dim)
        k = k.repeat_interleave(self.groups, dim=2)
        v = v.repeat_interleave(self.groups, dim=2)
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c["hidden"], c["ffn"], bias=False)
        self.up_proj = nn.Linear(c["hidden"], c["ffn"], bias=False)
        self.down_proj = nn.Linear(c["ffn"], c["hidden"], bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, c, seq):
        super().__init__()
        self.input_layernorm = nn.RMSNorm(c["hidden"], eps=c["rms_norm_eps"])
        self.self_attn = Attention(c, seq)
        self.post_attention_layernorm = nn.RMSNorm(c["hidden"], eps=c["rms_norm_eps"])
        self.mlp = Mlp(c)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """The whole model, or with `blocks` a pipeline stage: the embedding when
    `first`, those blocks, the norm and head when `last`."""

    def __init__(self, c, seq, blocks=None, first=True, last=True):
        super().__init__()
        blocks = range(c["layers"]) if blocks is None else blocks
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"]) if first else None
        self.layers = nn.ModuleDict({str(i): Block(c, seq) for i in blocks})
        self.norm = nn.RMSNorm(c["hidden"], eps=c["rms_norm_eps"]) if last else None
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False) if last else None

    def forward(self, x):
        if self.embed_tokens is not None:
            x = self.embed_tokens(x)
        for block in self.layers.values():
            x = block(x)
        if self.lm_head is not None:
            x = self.lm_head(self.norm(x))
        return x

    def load_hugging_face(self, weights):
        """Copies this model's part of Hugging Face named `weights`."""
        ours = {}
        for name in self.state_dict():
            theirs = name if name == "lm_head.weight" else "model." + name
            ours[name] = weights[theirs]
        self.load_state_dict(ours)


def adamw(model, c):
    """AdamW as Strata's: matrices decay, vectors do not."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": c["weight_decay"]},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=c["lr"], betas=(c["beta1"], c["beta2"]), eps=c["eps"])


def next_token_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))

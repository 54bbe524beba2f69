"""A Llama-style decoder in PyTorch for the benchmarks (imports torch: load only from bench code paths).

RMSNorm (Zhang & Sennrich 2019), rotary position embeddings (Su et al. 2021), grouped-query
attention (Ainslie et al. 2023) through `scaled_dot_product_attention` (flash / memory-efficient
kernels on GPUs), SwiGLU MLP (Shazeer 2020), untied output head: the Llama 2/3 block.
"""

from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint as _checkpoint

from .arch import Arch


def _sdpa_has_gqa() -> bool:
    try:
        return "enable_gqa" in inspect.signature(F.scaled_dot_product_attention).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)


_GQA = _sdpa_has_gqa()


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_tables(head_dim: int, seq: int, theta: float = 500000.0, device=None):
    """cos and sin tables (seq, head_dim/2) for rotary embeddings; theta as in Llama 3."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    t = torch.arange(seq, device=device, dtype=torch.float32)
    f = torch.outer(t, inv)
    return f.cos(), f.sin()


def apply_rope(x, cos, sin):
    """x: (b, heads, s, d); rotate pairs (x1, x2) of the two halves."""
    d = x.shape[-1] // 2
    x1, x2 = x[..., :d], x[..., d:]
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class Attention(nn.Module):
    def __init__(self, a: Arch):
        super().__init__()
        self.heads, self.kv_heads, self.hd = a.heads, a.kv_heads, a.head_dim
        self.wq = nn.Linear(a.hidden, a.heads * self.hd, bias=False)
        self.wk = nn.Linear(a.hidden, a.kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(a.hidden, a.kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(a.heads * self.hd, a.hidden, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.kv_heads != self.heads:
            if _GQA:
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            else:
                rep = self.heads // self.kv_heads
                o = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1),
                                                   is_causal=True)
        else:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(o.transpose(1, 2).reshape(b, s, -1))


class SwiGLU(nn.Module):
    def __init__(self, a: Arch):
        super().__init__()
        self.w1 = nn.Linear(a.hidden, a.ffn, bias=False)  # gate
        self.w3 = nn.Linear(a.hidden, a.ffn, bias=False)  # up
        self.w2 = nn.Linear(a.ffn, a.hidden, bias=False)  # down

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, a: Arch):
        super().__init__()
        self.attn_norm = RMSNorm(a.hidden)
        self.attn = Attention(a)
        self.mlp_norm = RMSNorm(a.hidden)
        self.mlp = SwiGLU(a)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(nn.Module):
    def __init__(self, a: Arch, seq: int, checkpoint: bool = False):
        super().__init__()
        self.arch, self.checkpoint = a, checkpoint
        self.tok = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)
        cos, sin = rope_tables(a.head_dim, seq)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, tokens):
        s = tokens.shape[1]
        cos, sin = self.cos[:s], self.sin[:s]
        x = self.tok(tokens)
        for blk in self.layers:
            if self.checkpoint and self.training:
                x = _checkpoint(blk, x, cos, sin, use_reentrant=False)
            else:
                x = blk(x, cos, sin)
        return self.head(self.norm(x))


def loss_fn(logits, targets):
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(0, 1))


def make_optimizer(model: nn.Module, device_type: str, lr: float = 3e-4):
    """AdamW, fused on CUDA (one kernel for all parameters) where this PyTorch supports it."""
    params = [p for p in model.parameters() if p.requires_grad]
    if device_type == "cuda":
        try:
            return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True), "fused"
        except (RuntimeError, TypeError, ValueError):
            pass
    return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.1, foreach=True), "foreach"


def random_batch(vocab: int, mbs: int, seq: int, device, generator=None):
    """Random token ids made on the device (no data download): inputs and next-token targets."""
    t = torch.randint(0, vocab, (mbs, seq + 1), device=device, generator=generator)
    return t[:, :-1], t[:, 1:]

"""A parallel layout (TP × PP × DP × CP × EP, micro-batch, recomputation, ZeRO) and its checks.

Rank order as in Megatron-Core (tp innermost, then cp, dp, pp): a TP group shares a node when
tp ≤ cards per node, a DP group crosses nodes once tp·cp·dp exceeds a node.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .errors import KashuError

RECOMPUTE = ("none", "selective", "full")


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    ep: int = 1
    vp: int = 1  # interleaved (virtual) stages per device
    mbs: int = 1
    recompute: str = "selective"
    sp: bool = True
    zero: int = 1

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    def to_dict(self) -> dict:
        return asdict(self)

    def arrays(self) -> dict[str, np.ndarray]:
        d = {k: np.array([float(v)]) for k, v in asdict(self).items() if k not in ("recompute", "sp")}
        d["rc"] = np.array([float(RECOMPUTE.index(self.recompute))])
        d["sp"] = np.array([1.0 if self.sp else 0.0])
        return d


def _err(en: str, zh: str, field: str) -> KashuError:
    return KashuError(en, zh, field)


def check_layout(lay: Layout, model, global_batch: int, gpus: int | None = None) -> int:
    """Raise a KashuError naming the broken constraint; return the micro-batches per step m."""
    for f in ("tp", "pp", "dp", "cp", "ep", "vp", "mbs"):
        v = getattr(lay, f)
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise _err(f"--{f} {v!r} must be a whole number >= 1", f"--{f} {v!r} 应为不小于 1 的整数", f)
    if lay.recompute not in RECOMPUTE:
        raise _err(f"--recompute {lay.recompute!r} must be none, selective or full",
                   f"--recompute {lay.recompute!r} 应为 none、selective 或 full", "recompute")
    if lay.zero not in (0, 1, 2, 3):
        raise _err(f"--zero {lay.zero!r} must be 0, 1, 2 or 3", f"--zero {lay.zero!r} 应为 0、1、2 或 3", "zero")
    if gpus is not None and lay.gpus != gpus:
        raise _err(f"tp {lay.tp} × pp {lay.pp} × dp {lay.dp} × cp {lay.cp} = {lay.gpus} does not equal --gpus {gpus}",
                   f"tp {lay.tp} × pp {lay.pp} × dp {lay.dp} × cp {lay.cp} = {lay.gpus}，不等于 --gpus {gpus}", "gpus")
    if model.heads % lay.tp:
        raise _err(f"--tp {lay.tp} does not divide the {model.heads} attention heads",
                   f"--tp {lay.tp} 不能整除 {model.heads} 个注意力头", "tp")
    if model.kv_heads % lay.tp and lay.tp % model.kv_heads:
        raise _err(f"--tp {lay.tp} and the {model.kv_heads} KV heads: one must divide the other",
                   f"--tp {lay.tp} 与 {model.kv_heads} 个 KV 头：须一方整除另一方", "tp")
    if lay.pp * lay.vp > model.layers:  # uneven splits are allowed: the busiest stage sets the pace
        raise _err(f"--pp {lay.pp} × --vp {lay.vp} is more than the {model.layers} layers",
                   f"--pp {lay.pp} × --vp {lay.vp} 多于 {model.layers} 层", "pp")
    if lay.vp > 1 and lay.pp == 1:
        raise _err("--vp > 1 (interleaved stages) needs --pp > 1", "--vp > 1（交错流水线）需要 --pp > 1", "vp")
    if model.seq_len % lay.cp or (lay.cp > 1 and (model.seq_len // lay.cp) % 2):
        raise _err(f"--cp {lay.cp} must split the sequence {model.seq_len} into even chunks",
                   f"--cp {lay.cp} 须把序列 {model.seq_len} 切成偶数长度的块", "cp")
    if lay.ep > 1:
        if not model.is_moe:
            raise _err("--ep > 1 needs an MoE model (--experts)", "--ep > 1 需要 MoE 模型（--experts）", "ep")
        if model.experts % lay.ep:
            raise _err(f"--ep {lay.ep} does not divide the {model.experts} experts",
                       f"--ep {lay.ep} 不能整除 {model.experts} 个专家", "ep")
        if (lay.dp * lay.cp) % lay.ep:
            raise _err(f"--ep {lay.ep} must divide dp × cp = {lay.dp * lay.cp} (experts are spread over data-parallel ranks)",
                       f"--ep {lay.ep} 须整除 dp × cp = {lay.dp * lay.cp}", "ep")
    if global_batch < 1 or global_batch % (lay.dp * lay.mbs):
        raise _err(f"--global-batch {global_batch} is not a multiple of dp {lay.dp} × mbs {lay.mbs}",
                   f"--global-batch {global_batch} 不是 dp {lay.dp} × mbs {lay.mbs} 的整数倍", "global_batch")
    m = global_batch // (lay.dp * lay.mbs)
    if lay.vp > 1 and m % lay.pp:
        raise _err(f"interleaved stages need micro-batches per step ({m}) to be a multiple of --pp {lay.pp}",
                   f"交错流水线要求每步微批数（{m}）是 --pp {lay.pp} 的整数倍", "vp")
    if lay.sp and lay.tp == 1:
        pass  # sequence parallelism is a no-op without TP
    return m

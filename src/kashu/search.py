"""Layout search: every TP × PP × DP × CP × EP × micro-batch × interleaving × recompute × ZeRO at once.

The candidates are built as NumPy arrays and evaluated in one vectorised pass of kashu.perf.evaluate;
infeasible ones (memory, divisibility) are dropped and the rest ranked by step time.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .errors import KashuError
from .layout import RECOMPUTE, Layout
from .perf import Fabric, Framework, _pick, evaluate, framework, result_dict


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def candidates(model, gpu, gpus: int, global_batch: int, flexible_batch: bool = False,
               zero_stages=(0, 1, 2, 3), recomputes=RECOMPUTE) -> dict[str, np.ndarray]:
    """All layouts whose degrees divide cards, heads, layers, experts and batch (arrays of equal length)."""
    node = gpu.gpus_per_node
    rows = []
    tps = [t for t in _divisors(gpus) if t <= node and model.heads % t == 0
           and (model.kv_heads % t == 0 or t % model.kv_heads == 0)]
    cps = [c for c in (1, 2, 4, 8) if model.seq_len >= 8192 * c // 2 and model.seq_len % (2 * c) == 0] or [1]
    for t in tps:
        for p in _divisors(gpus // t):
            # even splits, or a power-of-two pipeline over layers that do not divide (the last stages hold fewer)
            if p > model.layers or (model.layers % p and (p & (p - 1) or 2 * p > model.layers)):
                continue
            for c in cps:
                if (gpus // (t * p)) % c:
                    continue
                d = gpus // (t * p * c)
                eps = [e for e in _divisors(model.experts) if (d * c) % e == 0 and e <= 256] if model.is_moe else [1]
                for e in eps:
                    for b in (1, 2, 4, 8):
                        if flexible_batch:
                            gb = max(d * b, int(round(global_batch / (d * b))) * d * b)
                            if gb > 2 * global_batch:  # a batch far above the target changes the training recipe
                                continue
                        else:
                            if global_batch % (d * b):
                                continue
                            gb = global_batch
                        m = gb // (d * b)
                        vps = [1] if p == 1 else [v for v in (1, 2, 3, 4, 5, 6, 7, 8)
                                                  if p * v <= model.layers and (v == 1 or m % p == 0)]
                        for v in vps:
                            rows.append((t, p, d, c, e, v, b, gb))
    if not rows:
        return {}
    base = np.array(rows, dtype=float)
    knobs = np.array(list(itertools.product(range(len(recomputes)), zero_stages)), dtype=float)
    rc_idx = np.array([RECOMPUTE.index(r) for r in recomputes], dtype=float)
    nb, nk = len(base), len(knobs)
    full = np.repeat(base, nk, axis=0)
    kn = np.tile(knobs, (nb, 1))
    names = ("tp", "pp", "dp", "cp", "ep", "vp", "mbs", "gb")
    out = {k: full[:, i] for i, k in enumerate(names)}
    out["rc"] = rc_idx[kn[:, 0].astype(int)]
    out["zero"] = kn[:, 1]
    out["sp"] = (out["tp"] > 1).astype(float)
    return out


def search(model, gpu, gpus: int, global_batch: int, precision: str = "bf16", fabric: Fabric | None = None,
           fw: Framework | str = "modern", top: int = 5, flexible_batch: bool = False) -> list[dict]:
    """The `top` fastest layouts that fit, each with its breakdown; a KashuError saying what would fit otherwise."""
    if gpus < 1:
        raise KashuError(f"--gpus {gpus} must be at least 1", f"--gpus {gpus} 至少为 1", "gpus")
    if global_batch < 1:
        raise KashuError(f"--global-batch {global_batch} must be at least 1", f"--global-batch {global_batch} 至少为 1",
                         "global_batch")
    fw = framework(fw) if isinstance(fw, str) else fw
    recs = tuple(r for r in RECOMPUTE if not (fw.flash and r == "selective"))  # flash: selective = none
    cand = candidates(model, gpu, gpus, global_batch, flexible_batch, recomputes=recs)
    if not cand:
        raise KashuError(
            f"no layout of {gpus} cards divides the model ({model.heads} heads, {model.layers} layers) and the "
            f"global batch {global_batch}: use a card count and batch with more factors of 2",
            f"{gpus} 张卡没有能整除模型（{model.heads} 头、{model.layers} 层）和全局批 {global_batch} 的切分方式："
            "请用含更多 2 因子的卡数和批大小", "gpus")
    gb = cand.pop("gb")
    res = evaluate(model, gpu, cand, gb if flexible_batch else global_batch, precision, fabric, fw)
    st = np.where(res["fits"], res["step_time_s"], np.inf)
    # rank by time per sequence (batches may differ slightly with flexible_batch)
    score = st / (gb if flexible_batch else 1.0)
    order = np.argsort(score, kind="stable")
    good = [int(i) for i in order[: max(top, 1) * 4] if np.isfinite(score[i])]
    if not good:
        raise KashuError(*_no_fit(model, gpu, gpus, res))
    out, seen = [], set()
    for i in good:
        lay = Layout(tp=int(cand["tp"][i]), pp=int(cand["pp"][i]), dp=int(cand["dp"][i]), cp=int(cand["cp"][i]),
                     ep=int(cand["ep"][i]), vp=int(cand["vp"][i]), mbs=int(cand["mbs"][i]),
                     recompute=RECOMPUTE[int(cand["rc"][i])], sp=bool(cand["sp"][i]), zero=int(cand["zero"][i]))
        if lay in seen:
            continue
        seen.add(lay)
        r = result_dict(_pick(res, i), lay)
        r["global_batch"] = int(gb[i])
        out.append(r)
        if len(out) >= top:
            break
    return out


def _no_fit(model, gpu, gpus, res) -> tuple[str, str, str]:
    """What would make a layout fit: more cards, ZeRO-3, recomputation, a bigger card."""
    need = float(np.min(res["memory_bytes"]))
    cap = float(res["memory"]["capacity"].reshape(-1)[0])
    state = 18.0 * model.n_params  # bf16 weights + fp32 grads + Adam (perf.toml [memory])
    more = max(gpus * 2, int(math.ceil(state / (0.6 * cap) / gpu.gpus_per_node)) * gpu.gpus_per_node)
    from .hardware import catalog

    bigger = sorted({a.name for a in catalog() if a.memory_bytes > gpu.memory_bytes * 1.2 and a.bf16_tflops >= 100})
    en = (f"no layout of {model.name} fits on {gpus} × {gpu.name} ({gpu.memory_gb:g} GB): the leanest needs "
          f"{need / 1e9:,.0f} GB per card of {cap / 1e9:,.0f} usable (with ZeRO-3 and full recomputation already tried). "
          f"Would fit: more cards (try --gpus {more}), a shorter sequence or smaller micro-batch, or a card with more "
          f"memory ({', '.join(bigger[:4]) or 'none in the catalog'})")
    zh = (f"{model.name} 在 {gpus} 张 {gpu.name}（{gpu.memory_gb:g} GB）上没有放得下的切分：最省的方案每卡需 "
          f"{need / 1e9:,.0f} GB，可用 {cap / 1e9:,.0f} GB（已试过 ZeRO-3 与全量重计算）。可行的办法：更多卡（试 --gpus {more}）、"
          f"更短的序列，或显存更大的卡（{', '.join(bigger[:4]) or '目录中没有'}）")
    return en, zh, "gpus"

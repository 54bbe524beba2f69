"""What the planner asks of the performance model: MFU, layout and scaling at a cluster size."""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import compute
from .data import default
from .errors import KashuError
from .search import search

GLOBAL_BATCH_TOKENS = 4 * 2**20  # ≈ 4M tokens per step: Llama 2 (Touvron et al. 2023, §2.2), Llama 3 early stage 4M
TOKENS_PER_CARD = 1024  # Llama 3 405B: 16M tokens on 16,384 H100 (Dubey et al. 2024 §3.3.2, Table 4)
MAX_BATCH_TOKENS = 16 * 2**20  # Llama 3's final batch; larger batches change the training recipe


def global_batch_for(spec, cards: int = 0) -> int:
    """Sequences per step: 4M tokens, growing with the cluster to ~1K tokens per card, at most 16M."""
    tokens = min(max(GLOBAL_BATCH_TOKENS, TOKENS_PER_CARD * cards), MAX_BATCH_TOKENS)
    return max(1, round(tokens / spec.seq_len))


def best_at(spec, gpu, cards: int, precision: str = "bf16", fabric=None, framework: str = "modern") -> dict | None:
    """The fastest fitting layout on `cards` cards (batch rounded to the layout), or None when none fits."""
    try:
        res = search(spec, gpu, int(cards), global_batch_for(spec, int(cards)), precision, fabric, fw=framework, top=1,
                     flexible_batch=True)
    except KashuError:
        return None
    return res[0] if res else None


def scaling_curve(spec, gpu, up_to: int, precision: str = "bf16", fabric=None, framework: str = "modern") -> list[dict]:
    """Throughput per card vs card count, whole nodes doubling up to `up_to`; efficiency vs the smallest size that fits."""
    node = gpu.gpus_per_node
    sizes, n = [], node
    while n < up_to:
        sizes.append(n)
        n *= 2
    sizes.append(max(int(up_to), node))
    out, ref = [], None
    for n in sizes:
        r = best_at(spec, gpu, n, precision, fabric, framework)
        if r is None:
            continue
        per = r["tokens_per_s_per_gpu"]
        ref = ref or per
        out.append({"gpus": n, "tokens_per_s_per_gpu": per, "mfu": r["mfu"], "scaling_efficiency": per / ref,
                    "layout": r["layout"]})
    return out


# --------------------------------------------------------------------------- the planner's questions


@dataclass(frozen=True)
class Job:
    """What the planner knows when it asks for an MFU: the model, the card, the compute, and either a
    card count or a deadline (then the size is found by a few fixed-point rounds)."""

    spec: object
    gpu: object
    precision: str
    total_flops: float
    cards: int | None = None
    deadline_hours: float | None = None
    assumed_shape: bool = False  # the shape was guessed from a bare parameter count
    framework: str = "modern"  # the training stack's profile (data/perf.toml [framework.*])


def _whole_nodes(x: float, node: int) -> int:
    return int(math.ceil(x / node - 1e-9) * node)


def predict_mfu(job: Job, fabric_for=lambda cards: None) -> dict | None:
    """MFU of the best layout at the cluster size the plan lands on, its layout, the scaling curve and
    the reason in words (English and Chinese); None when no layout fits."""
    gpu, spec = job.gpu, job.spec
    node = gpu.gpus_per_node
    peak = gpu.peak_flops_for(job.precision)
    if job.cards:
        cards = int(job.cards)
    else:
        cards = _whole_nodes(max(1.0, compute.card_seconds(job.total_flops, peak, default("mfu")) / 3600 / job.deadline_hours), node)
    best = None
    for _ in range(3):
        best = best_at(spec, gpu, cards, job.precision, fabric_for(cards), job.framework)
        if best is None or job.cards:
            break
        need = compute.card_seconds(job.total_flops, peak, best["mfu"]) / 3600 / job.deadline_hours / default("goodput")
        nxt = _whole_nodes(max(1.0, need), node)
        if nxt == cards:
            break
        cards = nxt
    if best is None:
        return None
    fabric = fabric_for(cards)
    curve = scaling_curve(spec, gpu, cards, job.precision, fabric, job.framework)
    eff = curve[-1]["scaling_efficiency"] if curve else 1.0
    lay = dict(best["layout"], global_batch=best["global_batch"], gpus=cards, step_time_s=best["step_time_s"],
               memory_gb_per_gpu=best["memory_gb_per_gpu"], breakdown=best["breakdown"])
    why = (f"best layout on {cards} × {gpu.name} (TP{lay['tp']} PP{lay['pp']} DP{lay['dp']}, "
           f"{lay['recompute']} recompute) by kashu.perf, {job.framework} stack")
    if fabric is not None and fabric.source:
        why += f" over {fabric.source}"
    if job.assumed_shape:
        why += f"; {spec.note}"
    rec_zh = {"none": "不重计算", "selective": "选择性重计算", "full": "完全重计算"}.get(lay["recompute"], lay["recompute"])
    why_zh = (f"在 {cards} 张 {gpu.name} 上的最佳布局（TP{lay['tp']} PP{lay['pp']} DP{lay['dp']}，{rec_zh}），由 kashu.perf 预测"
              + (f"，网络：每节点 {fabric.source.replace(' per node', '')}" if fabric is not None and fabric.source else "")
              + (f"；未给 --model：按 Llama 结构假设 {spec.layers} 层、隐藏维 {spec.hidden}、{spec.heads} 个注意力头"
                 if job.assumed_shape else ""))
    return {"mfu": best["mfu"], "why": why, "why_zh": why_zh, "layout": lay, "curve": curve, "scaling_efficiency": eff,
            "shape": spec.to_dict() if job.assumed_shape else None}


def predict_on_fabric(job: Job, infra_model, user_fabric: bool = False) -> dict | None:
    """Predict the MFU over the fabric the cluster will have: the user's (--fabric), else the article's
    default for the size (kashu.infra picks it); when the step-time model says that misses the 0.8
    scaling bar, climb the fabric ladder (more rails, then faster fabrics) to the first that reaches it."""
    from . import infra, network

    g = job.gpu.gpus_per_node
    chosen: dict = {}

    def fabric_for(cards):
        c = infra.fabric_choice(infra_model, cards)
        if c is None:
            return None
        chosen[cards] = c
        return infra.perf_fabric(c[0], c[1], g)

    first = predict_mfu(job, fabric_for)
    if first is None or not chosen:
        return first
    cards = first["layout"]["gpus"]
    fab, nics = chosen.get(cards, next(iter(chosen.values())))
    bar = default("scaling_bar")
    if not user_fabric:
        first["fabric_choice"] = (fab.name, nics, f"the article's default for {cards:,} cards")
    if first["scaling_efficiency"] >= bar:
        return first
    eth_max = network.config()["bar"]["ethernet_max_cards"]
    best = first
    for f, n in network.ladder(fab, nics, g, rdma_only=cards > eth_max):
        cand = predict_mfu(job, lambda c, f=f, n=n: None if c <= g else infra.perf_fabric(f, n, g))
        if cand is None:
            continue
        if user_fabric:  # the user's fabric stands: only name the upgrade that would reach the bar
            if cand["scaling_efficiency"] >= bar:
                first["fabric_upgrade"] = network.upgrade_note(fab, nics, first["scaling_efficiency"], bar, f, n,
                                                               cand["scaling_efficiency"])
                break
            continue
        if cand["scaling_efficiency"] > best["scaling_efficiency"]:
            note = network.upgrade_note(fab, nics, first["scaling_efficiency"], bar, f, n, cand["scaling_efficiency"])
            cand["fabric_choice"] = (f.name, n, "upgraded by the step-time model: " + note["en"])
            cand["fabric_upgrade"] = note
            best = cand
        if cand["scaling_efficiency"] >= bar:
            break
    return best

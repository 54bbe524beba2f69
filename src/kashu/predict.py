"""What the planner asks of the performance model: MFU, layout and scaling at a cluster size."""

from __future__ import annotations

from .errors import KashuError
from .search import search

GLOBAL_BATCH_TOKENS = 4 * 2**20  # ≈ 4M tokens per step: Llama 2 (Touvron et al. 2023, §2.2), Llama 3 early stage 4M


def global_batch_for(spec) -> int:
    return max(1, round(GLOBAL_BATCH_TOKENS / spec.seq_len))


def best_at(spec, gpu, cards: int, precision: str = "bf16", fabric=None) -> dict | None:
    """The fastest fitting layout on `cards` cards (batch rounded to the layout), or None when none fits."""
    try:
        res = search(spec, gpu, int(cards), global_batch_for(spec), precision, fabric, top=1, flexible_batch=True)
    except KashuError:
        return None
    return res[0] if res else None


def scaling_curve(spec, gpu, up_to: int, precision: str = "bf16", fabric=None) -> list[dict]:
    """Throughput per card vs card count, whole nodes doubling up to `up_to`; efficiency vs the smallest size that fits."""
    node = gpu.gpus_per_node
    sizes, n = [], node
    while n < up_to:
        sizes.append(n)
        n *= 2
    sizes.append(max(int(up_to), node))
    out, ref = [], None
    for n in sizes:
        r = best_at(spec, gpu, n, precision, fabric)
        if r is None:
            continue
        per = r["tokens_per_s_per_gpu"]
        ref = ref or per
        out.append({"gpus": n, "tokens_per_s_per_gpu": per, "mfu": r["mfu"], "scaling_efficiency": per / ref,
                    "layout": r["layout"]})
    return out

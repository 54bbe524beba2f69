"""The figures a benchmark reports, from raw timings (pure: no torch, no I/O).

Step: median step time and its spread, tokens/s, achieved TFLOPS and MFU with the planner's FLOP
count (kashu.compute.flops_per_token, through Arch.flops_per_token). Comm: nccl-tests algbw/busbw
(kashu.collectives). Scale: weak-scaling efficiency against one card.
"""

from __future__ import annotations

import re
import statistics

from .. import collectives
from ..data import default, default_source
from ..errors import KashuError
from ..hardware import _index, _key, get_gpu


def match_card(device_name: str | None):
    """Map a name as torch.cuda.get_device_name() prints it ("NVIDIA H100 80GB HBM3") to the catalog.

    Exact name or alias first (kashu.hardware.get_gpu), else the longest catalog name or alias
    contained in the device name once "NVIDIA"/"GeForce" and separators are dropped. None if no match.
    """
    if not device_name:
        return None
    try:
        return get_gpu(device_name)
    except KashuError:
        pass
    key = _key(re.sub(r"(?i)\b(nvidia|amd|huawei|geforce|tesla)\b", "", device_name))
    if not key:
        return None
    best = None
    for k, acc in _index().items():
        if k and k in key and (best is None or len(k) > len(best[0])):
            best = (k, acc)
    return best[1] if best else None


def summarize_times(times: list[float]) -> dict:
    """Median and spread of step times, seconds (the median is robust to a stray slow step)."""
    if not times:
        raise ValueError("no timed steps")
    s = sorted(times)
    med = statistics.median(s)

    def q(p: float) -> float:  # nearest-rank quantile, fine for a handful of steps
        return s[min(len(s) - 1, max(0, round(p * (len(s) - 1))))]

    return {
        "median": med, "mean": statistics.fmean(s), "min": s[0], "max": s[-1], "p10": q(0.10), "p90": q(0.90),
        "std": statistics.pstdev(s) if len(s) > 1 else 0.0,
        "rel_spread": (q(0.90) - q(0.10)) / med if med > 0 else 0.0,
    }


def step_figures(step_time_s: float, tokens_per_step: int, flops_per_token: float,
                 peak_flops: float | None) -> dict:
    """tokens/s, achieved TFLOPS and MFU (a fraction; None when the peak is unknown)."""
    tps = tokens_per_step / step_time_s
    achieved = flops_per_token * tps  # FLOP/s
    return {
        "tokens_per_s": tps,
        "tflops": achieved / 1e12,
        "mfu": (achieved / peak_flops) if peak_flops else None,
    }


def comm_figures(op: str, size_bytes: int, seconds: float, n: int) -> dict:
    """nccl-tests algorithm and bus bandwidth of one collective, GB/s (1e9 bytes/s, as nccl-tests prints)."""
    alg = collectives.algbw(op, size_bytes, seconds)
    bus = collectives.busbw(op, size_bytes, seconds, n)
    return {"op": op, "size_bytes": int(size_bytes), "time_s": seconds, "algbw_gbps": alg / 1e9,
            "busbw_gbps": bus / 1e9, "bus_factor": float(collectives.bus_factor(op, n))}


def comm_summary(rows: list[dict]) -> dict:
    """Per operation: the best bus bandwidth and the bus bandwidth at the largest message."""
    out: dict[str, dict] = {}
    for r in rows:
        o = out.setdefault(r["op"], {"peak_busbw_gbps": 0.0, "largest_size_bytes": 0, "busbw_gbps_at_largest": 0.0})
        o["peak_busbw_gbps"] = max(o["peak_busbw_gbps"], r["busbw_gbps"])
        if r["size_bytes"] >= o["largest_size_bytes"]:
            o["largest_size_bytes"], o["busbw_gbps_at_largest"] = r["size_bytes"], r["busbw_gbps"]
    return out


def scaling_rows(points: list[dict]) -> list[dict]:
    """Weak scaling: efficiency(k) = throughput per card on k cards / throughput on one card.

    `points`: [{"cards": k, "step_time_s": t, "tokens_per_step_per_card": b·s}], one of them with k = 1.
    """
    base = [p for p in points if p["cards"] == 1]
    if not base:
        raise ValueError("weak scaling needs the one-card point")
    per_card_1 = base[0]["tokens_per_step_per_card"] / base[0]["step_time_s"]
    out = []
    for p in sorted(points, key=lambda p: p["cards"]):
        per_card = p["tokens_per_step_per_card"] / p["step_time_s"]
        out.append({**p, "tokens_per_s": per_card * p["cards"], "tokens_per_s_per_card": per_card,
                    "efficiency": per_card / per_card_1})
    return out


def scaling_bar() -> tuple[float, str]:
    """The article's bar for multi-card scaling efficiency (data/defaults.toml: scaling_bar)."""
    return default("scaling_bar"), default_source("scaling_bar")


def parse_size(text: str) -> int:
    """Message size: 1024, 4K, 16M, 1G (binary multiples, as nccl-tests' -b/-e)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgKMG]?)(?:i?[bB])?\s*", str(text))
    if not m:
        raise KashuError(f"message size {text!r} is not understood; expected e.g. 4K, 16M or 1G",
                         f"无法识别消息大小 {text!r}；应为 4K、16M 或 1G 这样的大小", "sizes")
    mult = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2).lower()]
    v = int(float(m.group(1)) * mult)
    if v < 4:
        raise KashuError(f"message size {text!r} is below 4 bytes", f"消息大小 {text!r} 小于 4 字节", "sizes")
    return v

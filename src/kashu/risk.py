"""Risk: a vectorised Monte Carlo over the uncertain inputs of a plan (pure; NumPy).

Uncertain inputs, each with a stated range in data/risk.toml (with its source):
  MFU (factor on the planned MFU), failure rate per card, restart time, checkpoint interval (the work
  lost per interruption is half of it), other goodput losses, and the price (reference or quote).

Per sample:
  interruptions/hour  λ = training cards × failure rate per card-hour
  failure goodput     g_f = 1 / (1 + λ · (restart + interval / 2))
  days                = card-hours at the planned MFU × (MFU / MFU_sample) / (cards × scaling × g_f × g_other) / 24
  cost                = leased cards × ⌈days·24 / lease unit⌉ × unit hours × price × price factor

The failure rate is a plain parameter (`failure_rate_per_1000_card_days`): a (low, high) range or a
single number; kashu.reliability can pass its own figure there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from .data import default, load_toml


@cache
def ranges() -> dict:
    return load_toml("risk.toml")


@dataclass(frozen=True)
class RiskInputs:
    gpu_hours: float  # card-hours at the planned MFU (no scaling or goodput losses)
    training_cards: float
    scaling: float
    leased_cards: int
    unit_hours: float  # lease unit (1 = pay by the hour)
    price_cny_per_card_hour: float
    deadline_days: float | None = None
    price_from_quote: bool = False


def _rate_range(rate_per_1000_card_days: float) -> tuple[float, float]:
    """The failure-rate range (per 1000 card-days) around a plan's own rate."""
    f = ranges()["failure_rate"]
    return rate_per_1000_card_days * float(f["low_factor"]), rate_per_1000_card_days * float(f["high_factor"])


def rate_range_for(rate_per_card_day: float) -> tuple[float, float]:
    return _rate_range(rate_per_card_day * 1000.0)


def _tri(rng: np.random.Generator, r: dict, n: int) -> np.ndarray:
    lo, mo, hi = float(r["low"]), float(r["mode"]), float(r["high"])
    if hi <= lo:
        return np.full(n, mo)
    return rng.triangular(lo, min(max(mo, lo), hi), hi, n)


def sample(inp: RiskInputs, n: int | None = None, seed: int | None = None,
           failure_rate_per_1000_card_days: float | tuple[float, float] | None = None) -> dict[str, np.ndarray]:
    """Draw n samples of days and cost (arrays)."""
    R = ranges()
    n = int(n or R["samples"]["n"])
    rng = np.random.default_rng(R["samples"]["seed"] if seed is None else seed)
    mfu_f = _tri(rng, R["mfu_factor"], n)
    fr = failure_rate_per_1000_card_days
    if fr is None:  # the range around the default rate (kashu.reliability)
        from .reliability import default_failure_rate

        fr = _rate_range(default_failure_rate()[0] * 1000.0)
    if isinstance(fr, tuple):
        lo, hi = math.log(fr[0]), math.log(fr[1])
        rate = np.exp(rng.uniform(lo, hi, n))
    else:
        rate = np.full(n, float(fr))
    rate_per_card_hour = rate / 1000.0 / 24.0
    restart_h = _tri(rng, R["restart_minutes"], n) / 60.0
    interval_h = _tri(rng, R["checkpoint_interval_hours"], n)
    other = _tri(rng, {**R["other_goodput"], "mode": default("other_goodput")}, n)
    price_f = _tri(rng, R["price_factor_quote" if inp.price_from_quote else "price_factor_reference"], n)

    lam = math.ceil(inp.training_cards) * rate_per_card_hour
    g_fail = 1.0 / (1.0 + lam * (restart_h + interval_h / 2.0))
    days = inp.gpu_hours / mfu_f / (inp.training_cards * inp.scaling * g_fail * other) / 24.0
    units = np.maximum(1.0, np.ceil(days * 24.0 / inp.unit_hours - 1e-9))
    cost = inp.leased_cards * units * inp.unit_hours * inp.price_cny_per_card_hour * price_f
    return {"days": days, "cost_cny": cost, "goodput": g_fail * other, "mfu_factor": mfu_f}


def summarise(inp: RiskInputs, n: int | None = None, seed: int | None = None,
              failure_rate_per_1000_card_days: float | tuple[float, float] | None = None) -> dict:
    """The plan's `risk` block: P10/P50/P90 of days, P50/P90 of cost, P(miss the deadline)."""
    s = sample(inp, n, seed, failure_rate_per_1000_card_days)
    d10, d50, d90 = (float(x) for x in np.percentile(s["days"], [10, 50, 90]))
    c10, c50, c90 = (float(x) for x in np.percentile(s["cost_cny"], [10, 50, 90]))
    R = ranges()
    return {
        "days_p10": d10, "days_p50": d50, "days_p90": d90,
        "cost_p10_cny": c10, "cost_p50_cny": c50, "cost_p90_cny": c90,
        "p_miss_deadline": (float(np.mean(s["days"] > inp.deadline_days)) if inp.deadline_days else None),
        "deadline_days": inp.deadline_days,
        "goodput_p50": float(np.median(s["goodput"])),
        "samples": int(len(s["days"])),
        "seed": int(R["samples"]["seed"] if seed is None else seed),
        "ranges": {k: {kk: v[kk] for kk in ("low", "mode", "high", "distribution", "source") if kk in v}
                   for k, v in R.items() if k != "samples"
                   and not (k == "price_factor_quote" and not inp.price_from_quote)
                   and not (k == "price_factor_reference" and inp.price_from_quote)},
    }

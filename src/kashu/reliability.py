"""Failures and checkpoints: job MTTF, the optimal checkpoint interval, goodput, spares.

Pure functions, SI units (seconds, bytes, bytes/s); failure rates are per card per day, as the
published logbooks count them. Sources in data/reliability.toml.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .data import load_toml
from .errors import KashuError

DAY = 86400.0


def config() -> dict:
    return load_toml("reliability.toml")


def default_failure_rate() -> tuple[float, str]:
    c = config()["failure_rate"]
    return float(c["value"]), str(c["source"])


def observed_rates() -> list[dict]:
    return [dict(r) for r in config()["observed"]]


def check_rate(rate: float) -> float:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or math.isnan(rate) or math.isinf(rate) or rate < 0:
        raise KashuError(
            f"--failure-rate {rate!r} must be a non-negative number of interruptions per card per day (Llama 3: 4.7e-4)",
            f"--failure-rate {rate!r} 应为非负数（每卡每天的中断次数；Llama 3 约 4.7e-4）", "failure_rate")
    if rate > 0.5:
        raise KashuError(f"--failure-rate {rate!r} per card-day is absurd (published runs: 3e-4 to 2e-3)",
                         f"--failure-rate {rate!r} 每卡每天过高（公开数据 3e-4 到 2e-3）", "failure_rate")
    return float(rate)


def interruptions_per_day(cards: float, rate_per_card_day: float) -> float:
    """Expected job interruptions per day: cards × per-card rate (a synchronous job stops when any card stops)."""
    return cards * check_rate(rate_per_card_day)


def job_mttf_s(cards: float, rate_per_card_day: float) -> float:
    """Job MTTF = 1 / (cards × per-card rate), seconds (infinite with a zero rate)."""
    if cards <= 0:
        raise KashuError("cards must be positive", "卡数必须为正", "gpus")
    lam = interruptions_per_day(cards, rate_per_card_day)
    return math.inf if lam == 0 else DAY / lam


def young_interval(delta_s: float, mttf_s: float) -> float:
    """Young 1974: τ = √(2·δ·M), δ = checkpoint stall, M = job MTTF."""
    if delta_s < 0 or mttf_s <= 0:
        raise KashuError("checkpoint time must be >= 0 and MTTF > 0", "checkpoint 时间应 >= 0，MTTF 应 > 0", "checkpoint")
    return math.sqrt(2.0 * delta_s * mttf_s)


def daly_interval(delta_s: float, mttf_s: float) -> float:
    """Daly 2006, eq. 37: τ = √(2δM)·[1 + ⅓·√(δ/2M) + (1/9)·(δ/2M)] − δ for δ < 2M, else τ = M."""
    if math.isinf(mttf_s):
        return math.inf
    if delta_s >= 2.0 * mttf_s:
        return mttf_s
    x = delta_s / (2.0 * mttf_s)
    return math.sqrt(2.0 * delta_s * mttf_s) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - delta_s


def goodput(tau_s: float, delta_s: float, mttf_s: float, restart_s: float, extra_lost_s: float = 0.0) -> float:
    """Useful share of wall time: each segment of τ compute costs τ + δ; each failure (rate 1/M) costs the
    restart R plus on average half a segment of lost work (+ an in-flight async write):
      goodput = τ/(τ+δ) × (1 − (R + (τ+δ)/2 + extra)/M)            (first-order, as Young/Daly)"""
    if math.isinf(mttf_s):
        return tau_s / (tau_s + delta_s) if math.isfinite(tau_s) else 1.0
    seg = tau_s + delta_s
    g = tau_s / seg * (1.0 - (restart_s + seg / 2.0 + extra_lost_s) / mttf_s)
    return max(0.01, min(1.0, g))


def poisson_quantile(lam: float, q: float) -> int:
    """Smallest k with P(X ≤ k) ≥ q for X ~ Poisson(λ)."""
    if lam <= 0:
        return 0
    k, p = 0, math.exp(-lam)
    cdf = p
    while cdf < q and k < 100000:
        k += 1
        p *= lam / k
        cdf += p
    return k


def hot_spare_nodes(cards: float, gpus_per_node: int, rate_per_card_day: float, repair_days: float | None = None,
                    quantile: float | None = None) -> int:
    """Spare nodes to cover the nodes down at once: Poisson(interruptions/day × repair days) at a quantile."""
    c = config()["spares"]
    lam = interruptions_per_day(cards, rate_per_card_day) * c["node_failure_share"] * (repair_days or c["repair_days"])
    return poisson_quantile(lam, quantile or c["quantile"])


@dataclass
class ReliabilityResult:
    cards: int
    failure_rate_per_card_day: float
    failure_rate_source: str
    failure_rate_range: list[float]
    mttf_hours: float
    interruptions_per_day: float
    expected_interruptions: float | None
    checkpoint_bytes: float
    checkpoint_mode: str
    write_gbps: float
    checkpoint_stall_s: float
    checkpoint_interval_min: float
    young_interval_min: float
    restart_min: float
    lost_per_failure_min: float
    goodput: float
    checkpoint_overhead: float
    failure_overhead: float
    extra_days: float | None
    extra_cost_cny: float | None
    hot_spare_nodes: int
    elastic_required: bool
    goodput_without_elastic: float
    explain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("mttf_hours", "checkpoint_interval_min", "young_interval_min"):
            if math.isinf(d[k]):
                d[k] = None
        return d


def checkpoint_stall(ckpt_bytes: float, write_bytes_per_s: float, mode: str, cards: int) -> float:
    """Seconds training waits per checkpoint. sync: bytes / storage write bandwidth. async: the snapshot to
    host memory (each card copies its shard at ~55 GB/s) plus the measured fixed stall of DCP async_save."""
    if write_bytes_per_s <= 0:
        raise KashuError("storage write bandwidth must be positive", "存储写带宽必须为正", "storage_write_gbps")
    if mode == "sync":
        return ckpt_bytes / write_bytes_per_s
    c = config()["checkpoint"]
    return c["async_overhead_s"] + ckpt_bytes / max(1, cards) / (c["host_copy_gbps"] * 1e9)


def reliability_model(*, cards: int, gpus_per_node: int, ckpt_bytes: float, write_bytes_per_s: float,
                      mode: str = "sync", rate_per_card_day: float | None = None, restart_s: float | None = None,
                      days: float | None = None, card_hours: float | None = None,
                      price_cny_per_card_hour: float | None = None) -> ReliabilityResult:
    """MTTF, interruptions, Daly's checkpoint interval, goodput, extra days and cost, spares, elasticity."""
    if mode not in ("sync", "async"):
        raise KashuError(f"checkpoint mode {mode!r} must be sync or async", f"checkpoint 方式 {mode!r} 应为 sync 或 async", "checkpoint")
    cfg = config()
    src = "user (--failure-rate)"
    if rate_per_card_day is None:
        rate_per_card_day, src = default_failure_rate()
    rate = check_rate(rate_per_card_day)
    cards = max(1, int(round(cards)))
    restart = float(cfg["restart"]["value_s"] if restart_s is None else restart_s)
    m = job_mttf_s(cards, rate)
    ipd = interruptions_per_day(cards, rate)
    delta = checkpoint_stall(ckpt_bytes, write_bytes_per_s, mode, cards)
    tau = daly_interval(delta, m)
    tau_y = young_interval(delta, m) if math.isfinite(m) else math.inf
    write_s = ckpt_bytes / write_bytes_per_s
    extra = write_s if mode == "async" else 0.0
    gp = goodput(tau, delta, m, restart, extra)
    manual = float(cfg["manual_restart"]["value_s"])
    gp_manual = goodput(tau, delta, m, manual, extra)
    ck_over = delta / (tau + delta) if math.isfinite(tau) else 0.0
    fail_over = (restart + (tau + delta) / 2 + extra) / m if math.isfinite(m) else 0.0
    lost = (tau + delta) / 2 + extra if math.isfinite(tau) else 0.0
    rates = [r["per_card_day"] for r in cfg["observed"]]
    extra_days = days * (1.0 - gp) if days is not None else None  # the days already include goodput: its loss share
    extra_cost = (card_hours * (1.0 / gp - 1.0) * price_cny_per_card_hour
                  if card_hours is not None and price_cny_per_card_hour is not None else None)
    h = m / 3600.0
    ex = [
        f"rate {rate:.3g} per card-day ({src}); published range {min(rates):.2g}–{max(rates):.2g}",
        f"job MTTF = 1 / ({cards:,} cards × {rate:.3g}/day) = {h:,.1f} h; {ipd:.2f} interruptions/day",
        f"checkpoint {ckpt_bytes / 1e9:,.0f} GB, {mode}: stall δ = "
        + (f"{ckpt_bytes / 1e9:,.0f} GB / {write_bytes_per_s / 1e9:,.1f} GB/s" if mode == "sync"
           else f"{cfg['checkpoint']['async_overhead_s']} s + shard copy to host") + f" = {delta:,.1f} s",
        f"interval (Daly 2006 eq. 37) = {tau / 60:,.1f} min (Young √(2δM) = {tau_y / 60:,.1f} min)",
        f"goodput = τ/(τ+δ) × (1 − (R {restart / 60:.1f} min + (τ+δ)/2{' + write' if extra else ''})/M) = {gp:.3f}",
    ]
    elastic = cards >= cfg["elastic"]["min_cards"]
    if elastic:
        ex.append(f"≥ {cfg['elastic']['min_cards']} cards: elastic fault-tolerant scheduling required; with a manual "
                  f"{manual / 60:.0f}-min restart goodput would be {gp_manual:.3f}")
    return ReliabilityResult(
        cards=cards, failure_rate_per_card_day=rate, failure_rate_source=src, failure_rate_range=[min(rates), max(rates)],
        mttf_hours=h, interruptions_per_day=ipd, expected_interruptions=ipd * days if days is not None else None,
        checkpoint_bytes=ckpt_bytes, checkpoint_mode=mode, write_gbps=write_bytes_per_s / 1e9,
        checkpoint_stall_s=delta, checkpoint_interval_min=tau / 60.0, young_interval_min=tau_y / 60.0,
        restart_min=restart / 60.0, lost_per_failure_min=(restart + lost) / 60.0, goodput=gp,
        checkpoint_overhead=ck_over, failure_overhead=fail_over, extra_days=extra_days, extra_cost_cny=extra_cost,
        hot_spare_nodes=hot_spare_nodes(cards, gpus_per_node, rate), elastic_required=elastic,
        goodput_without_elastic=gp_manual, explain=ex,
    )

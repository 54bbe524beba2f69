"""Rental cost: a lease rounded to its unit, against the pay-per-hour cost of the exact card-hours."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import cache

from .data import load_toml
from .errors import KashuError
from .hardware import Accelerator

LEASE_UNITS_HOURS = {"hour": 1.0, "day": 24.0, "week": 168.0, "month": 720.0, "quarter": 2184.0, "year": 8760.0}
# the price-book mode that a lease unit is priced at
LEASE_UNIT_MODE = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly",
                   "quarter": "quarterly", "year": "yearly"}


@dataclass(frozen=True)
class ReferencePrice:
    gpu: str
    cny_per_card_hour: float
    source: str
    as_of: str


@cache
def _prices() -> dict[str, ReferencePrice]:
    return {p["gpu"]: ReferencePrice(**p) for p in load_toml("prices.toml")["price"]}


def mode_factor(mode: str) -> float:
    f = load_toml("prices.toml")["mode_factor"]
    if mode not in f or mode == "source":
        raise KashuError(f"unknown rental mode {mode!r}; expected one of {', '.join(k for k in f if k not in ('source', 'as_of'))}",
                         f"未知租用方式 {mode!r}", "mode")
    return float(f[mode])


def reference_price(gpu: Accelerator) -> ReferencePrice | None:
    return _prices().get(gpu.name)


def check_lease_unit(unit: str) -> str:
    u = unit.strip().lower()
    aliases = {"d": "day", "daily": "day", "w": "week", "weekly": "week", "m": "month", "mo": "month",
               "monthly": "month", "q": "quarter", "quarterly": "quarter", "h": "hour", "hourly": "hour",
               "y": "year", "yearly": "year", "天": "day", "周": "week", "月": "month", "季度": "quarter", "年": "year"}
    u = aliases.get(u, u)
    if u not in LEASE_UNITS_HOURS:
        raise KashuError(f"lease unit {unit!r} is not one of hour, day, week, month, quarter, year",
                         f"租期单位 {unit!r} 应为 hour/day/week/month/quarter/year 之一", "lease")
    return u


def default_lease_unit(cards: int, days: float, tier: str) -> str:
    """The seed article's habits: tens of cards rent by day/week; hundreds on monthly bare metal;
    anything that runs a quarter or more locks a quarter (not a year: prices are falling)."""
    if days >= 80:
        return "quarter"
    if tier == "tens":
        return "day" if days <= 14 else "week"
    return "month"


@dataclass
class Cost:
    total_cny: float
    lease_unit: str
    lease_units: int
    lease_hours: float
    cards: int
    price_cny_per_card_hour: float  # price of the lease mode
    on_demand_cny_per_card_hour: float
    pay_per_hour_cny: float  # the exact card-hours consumed, at the on-demand price
    used_cny: float  # the share of the lease the training job actually uses, at the lease price
    idle_cny: float  # what the lease costs beyond that: rounding to the unit, and the reserve
    cost_per_million_tokens_cny: float
    source: str
    price_as_of: str
    mode: str
    notes: list[str]

    def to_dict(self) -> dict:
        return asdict(self)


def lease_cost(gpu: Accelerator, cards: int, run_days: float, used_card_hours: float, tokens: float,
               unit: str, price: ReferencePrice | None = None, mode: str | None = None) -> Cost | None:
    """cards × ⌈run hours / unit⌉·unit × price(mode), against pay-per-hour for the used card-hours."""
    price = price or reference_price(gpu)
    if price is None:
        return None
    mode = mode or LEASE_UNIT_MODE[unit]
    unit_h = LEASE_UNITS_HOURS[unit]
    run_h = run_days * 24.0
    units = max(1, math.ceil(run_h / unit_h - 1e-9))
    lease_h = units * unit_h
    p = price.cny_per_card_hour * mode_factor(mode)
    total = cards * lease_h * p
    used = used_card_hours * p
    on_demand = price.cny_per_card_hour
    return Cost(
        total_cny=total, lease_unit=unit, lease_units=units, lease_hours=lease_h, cards=cards,
        price_cny_per_card_hour=p, on_demand_cny_per_card_hour=on_demand,
        pay_per_hour_cny=used_card_hours * on_demand, used_cny=used, idle_cny=max(0.0, total - used),
        cost_per_million_tokens_cny=total / tokens * 1e6,
        source=f"reference: {price.source}", price_as_of=price.as_of, mode=mode,
        notes=[],
    )

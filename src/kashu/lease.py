"""The lease to sign (pure): from a plan's card-hours to quotes per rental mode, rounded to the lease
unit, with the article's 20 % redundancy, total / idle cost and cost per trained token; pay-as-you-go vs
monthly bare metal vs a quarter lock vs a year; and the domestic-card subsidy.

Prices: the cheapest valid matching quote in the price book (kashu.pricebook) for each mode, else the
shipped reference price (data/prices.toml) times the mode factor — the source is always named.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .cost import LEASE_UNITS_HOURS, Cost, mode_factor, reference_price
from .data import load_toml
from .errors import KashuError
from .hardware import Accelerator, catalog, get_gpu
from .pricebook import MODE_UNIT, MODES, Quote, matching
from .sites import residency_ok

OPTIONS = [  # (key, mode, en, zh)
    ("spot", "spot", "spot (preemptible)", "抢占式现货"),
    ("pay_as_you_go", "hourly", "pay-as-you-go (hourly)", "按量付费（按小时）"),
    ("monthly", "monthly", "monthly bare metal", "包月裸金属"),
    ("quarter", "quarterly", "quarter lock", "锁定一个季度"),
    ("year", "yearly", "year lock", "包年"),
]


def renting() -> dict:
    return load_toml("renting.toml")


@dataclass(frozen=True)
class PricePoint:
    cny_per_card_hour: float
    mode: str
    source: str
    as_of: str
    quote: Quote | None = None


def _round_up(x: float, multiple: int) -> int:
    return int(math.ceil(x / multiple - 1e-9) * multiple)


def eligible(quotes: Iterable[Quote], gpu: Accelerator, cards: int, today: dt.date, modes: Iterable[str] | None = None,
             data_must_stay_local: bool = False) -> list[Quote]:
    qs = matching(quotes, gpu.name, cards, today, modes)
    if data_must_stay_local:
        qs = [q for q in qs if residency_ok(q.site, q.deployment)]
    return qs


def cost_at(gpu: Accelerator, cards: int, run_days: float, used_card_hours: float, tokens: float, pp: PricePoint) -> Cost:
    """cards × ⌈run hours / unit⌉·unit × price — the same arithmetic as kashu.cost.lease_cost, at a price point."""
    unit = MODE_UNIT[pp.mode]
    unit_h = LEASE_UNITS_HOURS[unit]
    units = max(1, math.ceil(run_days * 24.0 / unit_h - 1e-9))
    lease_h = units * unit_h
    total = cards * lease_h * pp.cny_per_card_hour
    used = used_card_hours * pp.cny_per_card_hour
    ref = reference_price(gpu)
    on_demand = ref.cny_per_card_hour if ref else pp.cny_per_card_hour
    notes = []
    if pp.mode == "spot":
        notes.append("spot capacity can be preempted: checkpoint often")
    if pp.quote is not None and pp.quote.includes:
        notes.append(f"includes: {pp.quote.includes}")
    return Cost(total_cny=total, lease_unit=unit, lease_units=units, lease_hours=lease_h, cards=cards,
                price_cny_per_card_hour=pp.cny_per_card_hour, on_demand_cny_per_card_hour=on_demand,
                pay_per_hour_cny=used_card_hours * on_demand, used_cny=used, idle_cny=max(0.0, total - used),
                cost_per_million_tokens_cny=total / tokens * 1e6, source=pp.source, price_as_of=pp.as_of,
                mode=pp.mode, notes=notes)


def quote_point(q: Quote) -> PricePoint:
    return PricePoint(q.cny_per_card_hour, q.mode, f"quote: {q.vendor} {q.quoted_on}",
                      q.quoted_on, q)


def reference_point(gpu: Accelerator, mode: str) -> PricePoint | None:
    ref = reference_price(gpu)
    if ref is None:
        return None
    return PricePoint(ref.cny_per_card_hour * mode_factor(mode), mode,
                      f"reference: {ref.source} × {mode} factor {mode_factor(mode):g}", ref.as_of)


def cheapest_quote_cost(gpu: Accelerator, cards: int, run_days: float, used_card_hours: float, tokens: float,
                        quotes: Sequence[Quote], today: dt.date, modes: Iterable[str] | None = None,
                        data_must_stay_local: bool = False) -> Cost | None:
    """The cheapest total lease over the valid matching quotes (any mode unless `modes`), or None."""
    best = None
    for q in eligible(quotes, gpu, cards, today, modes, data_must_stay_local):
        c = cost_at(gpu, cards, run_days, used_card_hours, tokens, quote_point(q))
        if best is None or c.total_cny < best.total_cny - 1e-9:
            best = c
    return best


def plan_cost(gpu: Accelerator, cards: int, run_days: float, used_card_hours: float, tokens: float,
              quotes: Sequence[Quote], today: dt.date | None = None, lease_unit: str | None = None,
              stage: str | None = None, data_must_stay_local: bool = False) -> Cost | None:
    """The planner's hook: the cheapest valid matching quote (None → the planner keeps the reference price).

    An explicit lease unit restricts the modes to it; the train/iterate stages exclude preemptible spot.
    """
    today = today or dt.date.today()
    modes: set[str] | None = None
    if lease_unit:
        modes = {m for m, u in MODE_UNIT.items() if u == lease_unit}
    if stage in ("train", "iterate"):
        modes = (modes or set(MODES)) - {"spot"}
    return cheapest_quote_cost(gpu, cards, run_days, used_card_hours, tokens, quotes, today, modes, data_must_stay_local)


def lease_plan(gpu: Accelerator | str, card_hours: float, run_days: float, tokens: float, training_cards: float,
               redundancy: float = 0.20, quotes: Sequence[Quote] = (), today: dt.date | None = None,
               data_must_stay_local: bool = False, price_trend_per_quarter: float | None = None,
               stage: str | None = None) -> dict:
    """Compare the rental modes for one run.

    card_hours: the card-hours the job consumes (with scaling and goodput losses);
    training_cards: cards the job trains on; leased = training cards × (1 + redundancy), whole nodes.
    """
    gpu = get_gpu(gpu) if isinstance(gpu, str) else gpu
    if not 0 <= redundancy < 1:
        raise KashuError(f"redundancy {redundancy!r} must be in [0, 1)", f"冗余 {redundancy!r} 应在 [0, 1) 之间", "redundancy")
    today = today or dt.date.today()
    node = gpu.gpus_per_node
    leased = max(1, _round_up(training_cards * (1 + redundancy), node) if training_cards * (1 + redundancy) > node / 2
                 else math.ceil(training_cards * (1 + redundancy) - 1e-9))
    options = []
    for key, mode, en, zh in OPTIONS:
        if mode == "spot" and stage in ("train", "iterate"):
            continue  # preemptible capacity is not for the formal run
        qs = eligible(quotes, gpu, leased, today, [mode], data_must_stay_local)
        pts = [quote_point(q) for q in qs]
        if not pts:
            rp = reference_point(gpu, mode)
            pts = [rp] if rp else []
        if not pts:
            continue
        best = min((cost_at(gpu, leased, run_days, card_hours, tokens, p) for p in pts), key=lambda c: c.total_cny)
        options.append({"option": key, "name": en, "name_zh": zh, **best.to_dict()})
    trend = renting()["price_trend"]
    t = float(trend["per_quarter"] if price_trend_per_quarter is None else price_trend_per_quarter)
    rec = min(options, key=lambda o: o["total_cny"]) if options else None
    non_spot = [o for o in options if o["option"] != "spot"]
    rec_safe = min(non_spot, key=lambda o: o["total_cny"]) if non_spot else rec
    advice_en, advice_zh = [], []
    q = next((o for o in options if o["option"] == "quarter"), None)
    y = next((o for o in options if o["option"] == "year"), None)
    if q and y and run_days >= 45:
        # renewing a quarter lock four times at a price moving t per quarter, vs locking the year now
        renew = sum((1 + t) ** k for k in range(4)) / 4
        q_year_price = q["price_cny_per_card_hour"] * renew
        breakeven = _breakeven_trend(q["price_cny_per_card_hour"], y["price_cny_per_card_hour"])
        if t < 0:
            advice_en.append(
                f"Prices are expected to move {t:+.0%} a quarter: lock a quarter, not a year. Renewing quarterly averages "
                f"¥{q_year_price:.2f}/card-hour over a year vs ¥{y['price_cny_per_card_hour']:.2f} locked now"
                + (f"; the year lock is nominally cheaper unless prices fall faster than {abs(breakeven):.0%} a quarter, but the "
                   "quarter keeps you free to re-price and re-size." if q_year_price > y["price_cny_per_card_hour"]
                   else ", so the quarter lock is also cheaper outright."))
            advice_zh.append(
                f"预计价格每季度变化 {t:+.0%}：先锁定一个季度，不要一次签一年。按季度续约一年平均 ¥{q_year_price:.2f}/卡时，"
                f"现在包年 ¥{y['price_cny_per_card_hour']:.2f}/卡时"
                + (f"；除非每季度降价超过 {abs(breakeven):.0%}，包年名义上更便宜，但季度租期可以随时重新议价、调整规模。"
                   if q_year_price > y["price_cny_per_card_hour"] else "，季度租期本身也更便宜。"))
        if run_days * 24 < LEASE_UNITS_HOURS["year"] * 0.75:
            advice_en.append(f"The run needs {run_days:.0f} days: a year lock would leave most of the year idle.")
            advice_zh.append(f"训练只需 {run_days:.0f} 天：包年会让大半年闲置。")
    if rec and rec["option"] == "spot":
        advice_en.append("Spot is cheapest but preemptible: fine for exploring, risky for the formal run "
                         f"(next best: {rec_safe['name']}).")
        advice_zh.append(f"抢占式现货最便宜但可能被抢占：适合前期实验，正式训练有风险（其次：{rec_safe['name_zh']}）。")
    return {
        "gpu": gpu.name,
        "training_cards": training_cards,
        "redundancy": redundancy,
        "leased_cards": leased,
        "card_hours": card_hours,
        "run_days": run_days,
        "options": options,
        "cheapest": rec["option"] if rec else None,
        "recommended": rec_safe["option"] if rec_safe else None,
        "price_trend_per_quarter": t,
        "price_trend_source": trend["source"],
        "advice": advice_en,
        "advice_zh": advice_zh,
        "redundancy_source": "seed article, step 4: keep ~20% spare compute on a monthly bare-metal lease",
    }


def _breakeven_trend(p_quarter: float, p_year: float) -> float:
    """Quarterly price change t at which renewing a quarter lock for a year costs the same as the year lock."""
    lo, hi = -0.99, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if p_quarter * sum((1 + mid) ** k for k in range(4)) / 4 > p_year:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


# ---------------------------------------------------------------- subsidy (policy, not physics)

def check_share(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
        raise KashuError(f"--{name} {value!r} must be a fraction in [0, 1]", f"--{name} {value!r} 应为 [0, 1] 之间的小数", name)
    return float(value)


def domestic_card() -> Accelerator:
    return next(a for a in catalog() if a.domestic)


def subsidy(gpu: Accelerator, cost: Cost, share: float | None = None, cap_cny_per_year: float | None = None,
            domestic_reserve: float | None = None, quotes: Sequence[Quote] = (), today: dt.date | None = None) -> dict:
    """Effective price after a subsidy share (domestic cards by default) capped per firm per year, and
    optionally a reserve of nodes on domestic cards for compatibility testing."""
    cfg = renting()["subsidy"]
    user_share = share is not None
    if share is None:
        share = float(cfg["domestic_share"] if gpu.domestic else cfg["other_share"])
    cap = float(cfg["voucher_cap_cny_per_year"] if cap_cny_per_year is None else cap_cny_per_year)
    if cap < 0:
        raise KashuError("--voucher-cap must not be negative", "--voucher-cap 不能为负", "voucher_cap")
    years = max(1, math.ceil(cost.lease_hours / LEASE_UNITS_HOURS["year"] - 1e-9))
    sub = min(share * cost.total_cny, cap * years)
    eff = cost.total_cny - sub
    out = {
        "share": share,
        "share_source": "user (--subsidy)" if user_share else ("default for domestic cards" if gpu.domestic else "default for imported cards"),
        "voucher_cap_cny_per_year": cap,
        "subsidy_cny": sub,
        "effective_total_cny": eff,
        "effective_cny_per_card_hour": eff / (cost.cards * cost.lease_hours) if cost.cards and cost.lease_hours else None,
        "capped": share * cost.total_cny > cap * years,
        "assumption": (f"subsidy {share:.0%} of the lease, capped at ¥{cap:,.0f} per firm per year: policy, not physics. "
                       + cfg["source"]),
        "assumption_zh": f"补贴按租金的 {share:.0%} 计，每家企业每年上限 ¥{cap:,.0f}：这是政策假设，不是物理规律，请按实际批复填写。",
        "source": cfg["source"],
        "as_of": cfg["as_of"],
    }
    reserve = check_share(domestic_reserve, "domestic-reserve")
    if reserve is None:
        reserve = float(cfg["domestic_reserve"])
    if reserve > 0:
        dom = domestic_card()
        node = dom.gpus_per_node
        nodes = max(1, math.ceil(cost.cards / gpu.gpus_per_node * reserve - 1e-9))
        cards = nodes * node
        today = today or dt.date.today()
        mode = cost.mode
        qs = eligible(quotes, dom, cards, today, [mode])
        pts = [quote_point(q) for q in qs] or [p for p in [reference_point(dom, mode)] if p]
        if pts:
            pp = min(pts, key=lambda p: p.cny_per_card_hour)
            rc = cost_at(dom, cards, cost.lease_hours / 24.0, 0.0, 1.0, pp)
            dshare = share if (gpu.domestic or user_share) else float(cfg["domestic_share"])
            dsub = min(dshare * rc.total_cny, max(0.0, cap * years - sub))
            out["domestic_reserve"] = {
                "share": reserve, "gpu": dom.name, "nodes": nodes, "cards": cards, "mode": mode,
                "total_cny": rc.total_cny, "subsidy_cny": dsub, "effective_total_cny": rc.total_cny - dsub,
                "source": pp.source,
                "why": "seed article: reserve some Ascend 910 nodes to run compatibility tests; Beijing subsidies favour domestic chips",
                "why_zh": "原文：预留一部分昇腾910系列节点跑通兼容性测试，北京补贴更倾向国产芯片",
            }
    return out

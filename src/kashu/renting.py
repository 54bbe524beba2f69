"""The renting layer of a plan (pure): price from the book, risk, lease options, site and subsidy.

The planner calls two hooks, so its own code stays small:
  * `price(req, gpu, cards, days, used_card_hours, tokens, lease_unit)` — the cheapest valid matching quote
    in `req.quotes` (a Cost) or None to keep the shipped reference price;
  * `enrich(plan, req)` — fills `plan.risk` and adds `lease`, `site`, `subsidy` to the plan's JSON, with advice.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from . import lease as lease_mod
from . import risk as risk_mod
from . import sites
from .advice import ARTICLE, Advice
from .cost import LEASE_UNITS_HOURS, Cost
from .errors import KashuError
from .hardware import Accelerator
from .quantities import format_days, format_money

if TYPE_CHECKING:
    from .planner import Plan


def today_of(req: Any) -> dt.date:
    t = getattr(req, "today", None)
    if not t:
        return dt.date.today()
    if isinstance(t, dt.date):
        return t
    try:
        return dt.date.fromisoformat(str(t))
    except ValueError:
        raise KashuError(f"--today {t!r} is not an ISO date", f"--today {t!r} 不是 ISO 日期", "today") from None


def check(req: Any) -> None:
    """Validate the renting inputs of a request (raises KashuError)."""
    sites.check_stage(getattr(req, "stage", None))
    lease_mod.check_share(getattr(req, "subsidy", None), "subsidy")
    lease_mod.check_share(getattr(req, "domestic_reserve", None), "domestic-reserve")
    today_of(req)


def price(req: Any, gpu: Accelerator, cards: int, days: float, used_card_hours: float, tokens: float,
          lease_unit: str | None) -> Cost | None:
    """The cheapest valid matching quote; else, unless the user fixed the lease unit, the cheapest
    reference lease over the rental modes (spot only when exploring); None keeps the planner's own."""
    check(req)
    stage = sites.check_stage(getattr(req, "stage", None))
    quotes = getattr(req, "quotes", None) or ()
    if quotes:
        c = lease_mod.plan_cost(gpu, cards, days, used_card_hours, tokens, quotes, today_of(req), lease_unit, stage,
                                bool(getattr(req, "data_must_stay_local", False)))
        if c is not None:
            return c
    if lease_unit:
        return None
    modes = list(reference_modes(cards)) + (["spot"] if stage == "explore" else [])
    pts = [pt for pt in (lease_mod.reference_point(gpu, m) for m in modes) if pt]
    costs = [lease_mod.cost_at(gpu, cards, days, used_card_hours, tokens, pt) for pt in pts]
    return min(costs, key=lambda c: c.total_cny) if costs else None


def reference_modes(cards: int) -> tuple[str, ...]:
    """The rental modes a list price is offered in at this cluster size (data/prices.toml reference_modes)."""
    from .advice import tier_for
    from .data import load_toml

    return tuple(load_toml("prices.toml")["reference_modes"][tier_for(cards)])


def enrich(p: Plan, req: Any) -> None:
    lang = p.inputs.get("lang", "en")
    zh = lang == "zh"
    stage = sites.check_stage(getattr(req, "stage", None))
    local = bool(getattr(req, "data_must_stay_local", False))
    quotes = getattr(req, "quotes", None) or ()
    today = today_of(req)
    p.inputs["data_must_stay_local"] = local
    p.inputs["stage"] = stage
    rows: list[tuple[str, str]] = []

    # site and data residency
    priced_by = next((q for q in quotes if p.cost and p.cost.source == f"quote: {q.vendor} {q.quoted_on}"
                      and q.gpu == p.gpu.name), None)
    site = sites.decide(local, stage, p.tier, lang, prefer_site=priced_by.site if priced_by else None)
    p.extras["site"] = site
    for en, z in zip(site["reasons"], site["reasons_zh"], strict=True):
        p.advice.append(Advice("site.deployment", en, z, f"{ARTICLE}: 本地专有集群 vs 异地云上算力"))
    if site["pair_advice"]:
        p.advice.append(Advice("site.pair", site["pair_advice"], site["pair_advice_zh"], f"{ARTICLE}: 同城双活或灾备"))
    ts = site["training_site"]
    if ts:
        dep = {"local-dedicated": ("local dedicated", "本地专有集群"), "remote-cloud": ("remote cloud", "异地云上算力"),
               "bare-metal": ("bare metal", "裸金属")}[site["deployment"]]
        rows.append(("站点" if zh else "Site",
                     f"{dep[1] if zh else dep[0]}: {ts['name_zh'] if zh else ts['name']}"
                     + (f" + {site['inference_site']['name_zh'] if zh else site['inference_site']['name']}"
                        if site["inference_site"] else "")))
    if local and p.cost and p.cost.source.startswith("reference"):
        p.warnings.append("data must stay in Beijing, but no valid in-Beijing local-dedicated/bare-metal quote matched: "
                          "the reference price is a list price, local dedicated clusters run a little higher")
        p.warnings_zh.append("数据不出域，但报价簿里没有北京境内的本地专有/裸金属报价：参考价为公开价，本地专有集群单价略高")

    # lease options
    used_card_hours = p.gpu_hours / (p.scaling_efficiency * p.goodput)
    mode = p.inputs.get("mode")
    training = p.gpus_training if mode == "days" else float(p.gpus_recommended)
    red = p.redundancy if mode == "days" else 0.0
    if p.cost is not None:
        lp = lease_mod.lease_plan(p.gpu, used_card_hours, p.days, p.inputs["tokens"], training, red, quotes, today, local,
                                 stage=stage)
        p.extras["lease"] = lp
        for en, z in zip(lp["advice"], lp["advice_zh"], strict=True):
            p.advice.append(Advice("lease.compare", en, z, f"{ARTICLE}: Q&A 一卡难求和降价潮; data/renting.toml price_trend"))

    # risk
    c = p.cost
    ri = risk_mod.RiskInputs(
        gpu_hours=p.gpu_hours, training_cards=max(1.0, p.gpus_training), scaling=p.scaling_efficiency,
        leased_cards=c.cards if c else p.gpus_recommended,
        unit_hours=LEASE_UNITS_HOURS[c.lease_unit] if c else 1.0,
        price_cny_per_card_hour=c.price_cny_per_card_hour if c else 0.0,
        deadline_days=p.deadline_days, price_from_quote=bool(c and c.source.startswith("quote")))
    rate = (p.reliability or {}).get("failure_rate_per_card_day")
    r = risk_mod.summarise(ri, failure_rate_per_1000_card_days=risk_mod.rate_range_for(rate) if rate else None)
    if c is None:
        for k in ("cost_p10_cny", "cost_p50_cny", "cost_p90_cny"):
            r[k] = None
    p.risk = r
    miss = "" if r["p_miss_deadline"] is None else (
        f", 误期概率 {r['p_miss_deadline']:.0%}" if zh else f", P(miss deadline) {r['p_miss_deadline']:.0%}")
    rows.append(("风险（P10/P50/P90）" if zh else "Risk (P10/P50/P90)",
                 f"{format_days(r['days_p10'], lang)} / {format_days(r['days_p50'], lang)} / {format_days(r['days_p90'], lang)}"
                 + (f"; {format_money(r['cost_p50_cny'], lang)} – {format_money(r['cost_p90_cny'], lang)}" if c else "") + miss))
    if r["p_miss_deadline"] is not None and r["p_miss_deadline"] > 0.2:
        p.advice.append(Advice(
            "risk.deadline",
            f"{r['p_miss_deadline']:.0%} of the Monte Carlo runs miss the {p.deadline_days:g}-day deadline "
            f"(P90 {r['days_p90']:.1f} days): add a node or two, or relax the deadline.",
            f"蒙特卡洛模拟中 {r['p_miss_deadline']:.0%} 的情形超过 {p.deadline_days:g} 天期限（P90 {r['days_p90']:.1f} 天）："
            "加一两台机器，或放宽期限。", "kashu risk (data/risk.toml)", "warn"))

    # subsidy
    if c is not None:
        sub = lease_mod.subsidy(p.gpu, c, getattr(req, "subsidy", None), getattr(req, "voucher_cap", None),
                                getattr(req, "domestic_reserve", None), quotes, today)
        p.extras["subsidy"] = sub
        if sub["share"] > 0:
            rows.append(("补贴后" if zh else "After subsidy",
                         f"{format_money(sub['effective_total_cny'], lang)} ({sub['share']:.0%}"
                         + ("，政策假设）" if zh else ", a policy assumption)")))
            p.advice.append(Advice("subsidy.assumption", sub["assumption"].split(" Beijing compute")[0], sub["assumption_zh"],
                                   sub["source"]))
        dr = sub.get("domestic_reserve")
        if dr:
            rows.append(("国产卡预留" if zh else "Domestic reserve",
                         f"{dr['cards']} × {dr['gpu']}: {format_money(dr['effective_total_cny'], lang)}"))
            p.advice.append(Advice("subsidy.domestic_reserve",
                                   f"Reserve {dr['nodes']} node(s) of {dr['gpu']} ({dr['cards']} cards) for compatibility "
                                   f"testing: {format_money(dr['effective_total_cny'])} after subsidy.",
                                   f"预留 {dr['nodes']} 台 {dr['gpu']}（{dr['cards']} 张卡）跑兼容性测试：补贴后 "
                                   f"{format_money(dr['effective_total_cny'], 'zh')}。", dr["why"]))
    p._render_extra = rows  # type: ignore[attr-defined]  (report/terminal.py shows these in the result panel)

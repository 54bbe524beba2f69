"""Scenarios (pure): compare plan options side by side, the article's two-phase plan (prove on 64, then
256), and a sweep of cluster sizes with its days-vs-cost Pareto front and one recommended point.

The web app calls `compare(options)` and `sweep(options)` with the same option names as `PlanRequest`
(any value of `compare` may be a list or a comma-separated string); quotes go in `options["quotes"]`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from .cost import LEASE_UNITS_HOURS, lease_cost
from .data import load_toml
from .errors import KashuError
from .hardware import get_gpu
from .lease import cost_at, eligible, quote_point
from .planner import PlanRequest, plan
from .quantities import parse_count

FLOATS = {"mfu", "redundancy", "subsidy", "voucher_cap", "domestic_reserve", "failure_rate"}
INTS = {"lora_rank", "nics_per_node"}
BOOLS = {"data_must_stay_local"}
LISTABLE = {"params", "tokens", "gpu", "days", "gpus", "budget", "mfu", "method", "lora_rank", "precision",
            "redundancy", "lease", "stage", "data_must_stay_local", "subsidy", "voucher_cap", "domestic_reserve",
            "model", "framework", "fabric", "nics_per_node", "failure_rate"}
_TRUE = {"yes", "y", "true", "1", "local", "是", "on"}
_FALSE = {"no", "n", "false", "0", "any", "remote", "否", "off"}


def _convert(key: str, v: Any) -> Any:
    if v is None or v == "":
        return None
    if key in BOOLS:
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise KashuError(f"--{key.replace('_', '-')} {v!r} must be yes or no", f"--{key.replace('_', '-')} {v!r} 应为 yes 或 no", key)
    if key in FLOATS:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise KashuError(f"--{key.replace('_', '-')} {v!r} is not a number", f"--{key.replace('_', '-')} {v!r} 不是数字", key) from None
        if math.isnan(f):
            raise KashuError(f"--{key.replace('_', '-')} {v!r} is not a number", f"--{key.replace('_', '-')} {v!r} 不是数字", key)
        return f
    if key in INTS:
        try:
            return int(v)
        except (TypeError, ValueError):
            raise KashuError(f"--{key.replace('_', '-')} {v!r} is not a whole number", f"--{key.replace('_', '-')} {v!r} 不是整数", key) from None
    return v


def _values(key: str, v: Any) -> list:
    if isinstance(v, (list, tuple)):
        items = list(v)
    elif isinstance(v, str) and key in LISTABLE and "," in v:
        items = [x.strip() for x in v.split(",")]
        if any(x == "" for x in items):
            raise KashuError(f"--{key.replace('_', '-')} {v!r} has an empty item", f"--{key.replace('_', '-')} {v!r} 含空项", key)
    else:
        items = [v]
    return [_convert(key, x) for x in items]


def expand(options: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """All combinations: [(request kwargs, the varying values that name the scenario)]."""
    fixed, varying = {}, {}
    for k, v in options.items():
        if k == "quotes":
            fixed[k] = v
            continue
        vals = _values(k, v)
        if len(vals) > 1:
            varying[k] = vals
        else:
            fixed[k] = vals[0]
    n = math.prod(len(v) for v in varying.values()) if varying else 1
    if n > 200:
        raise KashuError(f"{n} combinations is too many to compare (at most 200)", f"{n} 种组合太多（最多 200 种）", "compare")
    out = []
    keys = list(varying)
    for combo in itertools.product(*(varying[k] for k in keys)):
        name = dict(zip(keys, combo, strict=True))
        out.append(({**fixed, **name}, name))
    return out


def _request(kw: dict[str, Any]) -> PlanRequest:
    fields = PlanRequest.__dataclass_fields__
    unknown = [k for k in kw if k not in fields]
    if unknown:
        raise KashuError(f"unknown plan option {unknown[0]!r}", f"未知的规划参数 {unknown[0]!r}", unknown[0])
    return PlanRequest(**{k: v for k, v in kw.items() if v is not None})


def two_phase(kw: dict[str, Any], large_plan: dict, small_cards: int | None = None, prove_days: float | None = None) -> dict:
    """The article's stage advice: prove the pipeline on a small cluster first, then the formal run."""
    cfg = load_toml("renting.toml")["two_phase"]
    small = int(small_cards or cfg["prove_cards"])
    pdays = float(prove_days or cfg["prove_days"])
    req = _request(kw)
    gpu = get_gpu(req.gpu)
    quotes = req.quotes or []
    from .renting import today_of

    unit = "week" if pdays >= 7 else "day"
    qs = eligible(quotes, gpu, small, today_of(req), None, bool(req.data_must_stay_local))
    if req.stage in ("train", "iterate"):
        qs = [q for q in qs if q.mode != "spot"]
    costs = [cost_at(gpu, small, pdays, small * pdays * 24.0, 1.0, quote_point(q)) for q in qs]
    ref = lease_cost(gpu, small, pdays, small * pdays * 24.0, 1.0, unit)
    if ref is not None:
        costs.append(ref)
    if not costs:
        return {}
    c1 = min(costs, key=lambda c: c.total_cny)
    c2 = large_plan["cost"]["total_cny"]
    total = None if c2 is None else c1.total_cny + c2
    large = int(large_plan["gpus_recommended"])
    return {
        "phase1": {"gpus": small, "days": pdays, "cost_cny": c1.total_cny, "lease_unit": c1.lease_unit,
                   "cost_source": c1.source, "purpose": "prove the whole pipeline (data, code, checkpoints, restarts)",
                   "purpose_zh": "跑通全流程（数据、代码、checkpoint、断点续训）"},
        "phase2": {"gpus": large, "days": large_plan["days"], "cost_cny": c2,
                   "cost_source": large_plan["cost"]["source"], "purpose": "the formal run",
                   "purpose_zh": "正式训练"},
        "total_days": pdays + large_plan["days"],
        "total_cost_cny": total,
        "extra_cost_share": (c1.total_cny / c2) if c2 else None,
        "advice": (f"Prove the pipeline on {small} cards for {pdays:g} days (¥{c1.total_cny:,.0f}), then train on {large} "
                   f"cards: {pdays:g} more days and {c1.total_cny / c2:.0%} more money, against a failed first run at "
                   f"full size that amplifies the bugs." if c2 else ""),
        "advice_zh": (f"先用 {small} 卡跑通全流程 {pdays:g} 天（¥{c1.total_cny:,.0f}），再上 {large} 卡正式训练：多花 {pdays:g} 天和 "
                      f"{c1.total_cny / c2:.0%} 的钱，换来不在大集群上放大 bug。" if c2 else ""),
        "source": cfg["source"],
    }


def compare(options: dict[str, Any]) -> dict:
    """Plan every combination; `{"scenarios": [plan, ...], "two_phase": {...} | None}`."""
    combos = expand(options)
    scenarios = []
    for kw, name in combos:
        d = plan(_request(kw)).to_dict()
        d["scenario"] = {k: v for k, v in name.items()}
        scenarios.append(d)
    out: dict[str, Any] = {"scenarios": scenarios, "two_phase": None}
    gp = _values("gpus", options.get("gpus")) if options.get("gpus") not in (None, "") else []
    sizes = sorted({int(parse_count(g, "--gpus", "--gpus", "gpus")) for g in gp})
    if len(sizes) >= 2:
        big = [i for i, s in enumerate(scenarios) if s["inputs"].get("gpus") == sizes[-1]]
        if big:
            out["two_phase"] = two_phase(combos[big[0]][0], scenarios[big[0]], small_cards=sizes[0])
    elif len(scenarios) == 1:
        cfg = load_toml("renting.toml")["two_phase"]
        if scenarios[0]["gpus_recommended"] > int(cfg["prove_cards"]) * 1.5:
            out["two_phase"] = two_phase(combos[0][0], scenarios[0])
    return out


# ---------------------------------------------------------------- sweep

DEFAULT_SIZES = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)


def pareto_flags(points: Sequence[tuple[float, float]]) -> list[bool]:
    """True where no other point is at least as good in both and better in one (minimising both)."""
    flags = []
    for i, (a_d, a_c) in enumerate(points):
        dominated = any(b_d <= a_d and b_c <= a_c and (b_d < a_d or b_c < a_c)
                        for j, (b_d, b_c) in enumerate(points) if j != i)
        flags.append(not dominated)
    return flags


def recommend(points: Sequence[dict], deadline_days: float | None = None) -> int | None:
    """Index of the recommended Pareto point: with a deadline, the cheapest whose P90 (else P50) days meet it;
    without, the knee — the front point (of those finishing within a year) closest to the ideal (min days, min
    cost) after scaling log(days) and cost to 0..1 (days span orders of magnitude, cost does not)."""
    front = [i for i, p in enumerate(points) if p["pareto"]]
    if not front:
        return None
    if deadline_days:
        ok = [i for i in front if (points[i].get("days_p90") or points[i]["days"]) <= deadline_days]
        if not ok:
            ok = [i for i in front if points[i]["days"] <= deadline_days]
        if ok:
            return min(ok, key=lambda i: (points[i]["cost_cny"], points[i]["days"]))
        return min(front, key=lambda i: (points[i]["days"], points[i]["cost_cny"]))
    cap = float(load_toml("renting.toml")["sweep"]["max_recommended_days"])
    front = [i for i in front if points[i]["days"] <= cap] or front
    ds = [math.log(points[i]["days"]) for i in front]
    cs = [points[i]["cost_cny"] for i in front]
    dlo, dhi, clo, chi = min(ds), max(ds), min(cs), max(cs)

    def score(i: int) -> float:
        d = (math.log(points[i]["days"]) - dlo) / (dhi - dlo) if dhi > dlo else 0.0
        c = (points[i]["cost_cny"] - clo) / (chi - clo) if chi > clo else 0.0
        return math.hypot(d, c)

    return min(front, key=lambda i: (score(i), points[i]["cost_cny"]))


def sweep(options: dict[str, Any], sizes: Sequence[int] | None = None, max_days: float = 3650.0) -> dict:
    """Walk cluster sizes (whole nodes, enough memory for the training state) → the days-vs-cost curve."""
    opts = {k: v for k, v in options.items() if k not in ("gpus", "budget")}
    deadline = opts.pop("days", None)
    deadline_days = None
    if deadline not in (None, ""):
        from .quantities import parse_days

        deadline_days = parse_days(deadline, "--days", "--days", "days")
    base = _request({**opts, "gpus": 8})
    gpu = get_gpu(base.gpu)
    node = gpu.gpus_per_node
    n_params = parse_count(base.params, "parameters", "参数量", "params") if base.params is not None else None
    cands = sorted({int(s) for s in (sizes or DEFAULT_SIZES)})
    if any(c < 1 for c in cands):
        raise KashuError("--sizes must be positive card counts", "--sizes 应为正整数卡数", "sizes")
    if not sizes:
        cands = [c for c in cands if c % node == 0 or c < node]
        if n_params and base.method == "full":
            need = math.ceil(16.0 * n_params / gpu.memory_bytes)
            cands = [c for c in cands if c >= need]
    points = []
    for n in cands:
        p = plan(_request({**opts, "gpus": n}))
        if p.days > max_days:
            continue
        cost = p.cost.total_cny if p.cost else None
        if cost is None:
            raise KashuError(f"no price for {gpu.name}: add a quote (kashu quotes add) to sweep costs",
                             f"{gpu.name} 没有价格：请先添加报价再扫描成本", "gpu")
        r = p.risk or {}
        points.append({"gpus": n, "nodes": n / node, "days": p.days, "cost_cny": cost,
                       "days_p10": r.get("days_p10"), "days_p50": r.get("days_p50"), "days_p90": r.get("days_p90"),
                       "cost_p50_cny": r.get("cost_p50_cny"), "cost_p90_cny": r.get("cost_p90_cny"),
                       "p_miss_deadline": (None if not deadline_days else
                                           _p_miss(r, p, deadline_days)),
                       "lease_unit": p.cost.lease_unit, "cost_source": p.cost.source,
                       "cost_per_million_tokens_cny": p.cost.cost_per_million_tokens_cny,
                       "pareto": False, "recommended": False})
    if not points:
        raise KashuError("no cluster size in the sweep can hold and finish the run", "扫描范围内没有能放下并完成训练的集群规模", "gpus")
    for pt, f in zip(points, pareto_flags([(p["days"], p["cost_cny"]) for p in points]), strict=True):
        pt["pareto"] = f
    rec = recommend(points, deadline_days)
    if rec is not None:
        points[rec]["recommended"] = True
    return {"gpu": gpu.name, "deadline_days": deadline_days, "points": points,
            "recommended": points[rec]["gpus"] if rec is not None else None,
            "rule": ("cheapest Pareto point whose P90 days meet the deadline" if deadline_days else
                     "knee of the Pareto front (runs up to a year): closest to (fewest days, least cost), log(days) and cost scaled to 0..1")}


def _p_miss(r: dict, p: Any, deadline_days: float) -> float | None:
    """P(miss) for a sweep point: rerun the Monte Carlo against the sweep's deadline."""
    from . import risk as risk_mod

    c = p.cost
    ri = risk_mod.RiskInputs(gpu_hours=p.gpu_hours, training_cards=max(1.0, p.gpus_training), scaling=p.scaling_efficiency,
                             leased_cards=c.cards, unit_hours=LEASE_UNITS_HOURS[c.lease_unit],
                             price_cny_per_card_hour=c.price_cny_per_card_hour, deadline_days=deadline_days,
                             price_from_quote=c.source.startswith("quote"))
    return risk_mod.summarise(ri)["p_miss_deadline"]

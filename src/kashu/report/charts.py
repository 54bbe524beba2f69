"""Plotly figures of a plan, as plain dicts ({"data": [...], "layout": {...}}) so any page can draw them.

Every figure comes with a title and a sentence saying how it was computed. Figures whose data the plan
does not carry yet (layout, reliability, risk) are simply left out.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any

from ..data import load_toml
from ..errors import KashuError

SWEEP_POINTS = 12  # cluster sizes tried for the days/cost curves
SWEEP_SECONDS = 3.0  # and never longer than this


@dataclass
class Figure:
    key: str
    title: str
    explain: str
    figure: dict[str, Any]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _L(lang: str, en: str, zh: str) -> str:
    return zh if lang == "zh" else en


def _layout(title: str, xt: str, yt: str, **kw) -> dict:
    lay = {"title": {"text": title, "font": {"size": 14}}, "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
           "height": 320, "xaxis": {"title": {"text": xt}}, "yaxis": {"title": {"text": yt}},
           "legend": {"orientation": "h", "y": -0.25}, "font": {"family": "sans-serif"}}
    lay.update(kw)
    return lay


# ------------------------------------------------------------------ the sweep over cluster sizes

def sweep_sizes(recommended: int, node: int, max_gpus: int, points: int = SWEEP_POINTS) -> list[int]:
    """Whole-node cluster sizes from about 1/8 to 4x the recommended one, on a geometric grid."""
    rec = max(1, int(recommended))
    lo, hi = max(1.0, rec / 8), float(min(max_gpus, rec * 4))
    out = {rec}
    for i in range(points):
        x = lo * (hi / lo) ** (i / max(1, points - 1)) if hi > lo else lo
        n = int(round(x / node)) * node if x >= node else (1 << max(0, int(math.log2(max(1.0, x)))))
        out.add(max(1, min(max_gpus, n)))
    return sorted(out)


def sweep(req, plan, points: int = SWEEP_POINTS, seconds: float = SWEEP_SECONDS) -> list[dict]:
    """plan() at several card counts: [{gpus, days, cost_cny, pareto, recommended}] (bounded in count and time)."""
    from ..planner import plan as run_plan

    lim = int(load_toml("defaults.toml")["limits"]["max_gpus"])
    sizes = sweep_sizes(plan.gpus_recommended, plan.gpu.gpus_per_node, lim, points)
    t0 = time.monotonic()
    pts = []
    for n in sizes:
        if time.monotonic() - t0 > seconds:
            break
        try:
            p = run_plan(dataclasses.replace(req, days=None, budget=None, gpus=n))
        except (KashuError, TypeError, ValueError):
            continue
        pts.append({"gpus": n, "days": p.days, "cost_cny": p.cost.total_cny if p.cost else None,
                    "recommended": n == plan.gpus_recommended, "pareto": False})
    priced = [q for q in pts if q["cost_cny"] is not None]
    for q in priced:
        q["pareto"] = not any(o is not q and o["days"] <= q["days"] and o["cost_cny"] <= q["cost_cny"]
                              and (o["days"] < q["days"] or o["cost_cny"] < q["cost_cny"]) for o in priced)
    return pts


def _log_axis(title: str, xs: list[int]) -> dict:
    """A log axis with ticks at powers of two (card counts people rent), not at 2, 3, … 9."""
    lo, hi = max(1, min(xs)), max(xs)
    ticks = [1 << k for k in range(0, 21) if lo / 1.5 <= (1 << k) <= hi * 1.5]
    return {"type": "log", "title": {"text": title}, "tickvals": ticks, "ticktext": [f"{t:,}" for t in ticks]}


def days_vs_cards(pts: list[dict], plan, lang: str) -> Figure:
    x = [p["gpus"] for p in pts]
    y = [p["days"] for p in pts]
    data = [{"type": "scatter", "mode": "lines+markers", "x": x, "y": y, "name": _L(lang, "days", "天数"),
             "hovertemplate": _L(lang, "%{x} cards: %{y:.1f} days", "%{x} 张卡：%{y:.1f} 天") + "<extra></extra>"},
            {"type": "scatter", "mode": "markers", "x": [plan.gpus_recommended], "y": [plan.days],
             "name": _L(lang, "recommended", "建议规模"), "marker": {"size": 14, "color": "#d62728", "symbol": "star"}}]
    shapes = []
    if plan.deadline_days:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": plan.deadline_days,
                       "y1": plan.deadline_days, "line": {"dash": "dash", "color": "#888"}})
    fig = {"data": data, "layout": _layout(_L(lang, "Days vs cards", "天数与卡数"), _L(lang, "cards", "卡数"),
                                           _L(lang, "days", "天"), xaxis=_log_axis(_L(lang, "cards", "卡数"), x), shapes=shapes)}
    return Figure("days_vs_cards", _L(lang, "Days vs cards", "天数与卡数"), _L(
        lang, "The same plan run at each cluster size (whole nodes): days = card-hours / (cards × scaling × goodput) / 24. "
        "Every card trains in the sweep; the star is the recommended cluster, which keeps its reserve. The dashed line is the deadline.",
        "在每个集群规模（整机）上重算同一计划（所有卡都参与训练）：天数 = 卡时 / (卡数 × 扩展效率 × 有效率) / 24。星号为建议规模（保留冗余），虚线为期限。"), fig)


def cost_vs_cards(pts: list[dict], plan, lang: str) -> Figure | None:
    priced = [p for p in pts if p["cost_cny"] is not None]
    if not priced:
        return None
    front = [p for p in priced if p["pareto"]]
    other = [p for p in priced if not p["pareto"]]
    hover = _L(lang, "%{x} cards: ¥%{y:,.0f}, %{customdata:.1f} days", "%{x} 张卡：¥%{y:,.0f}，%{customdata:.1f} 天") + "<extra></extra>"
    data = [{"type": "scatter", "mode": "markers", "x": [p["gpus"] for p in other], "y": [p["cost_cny"] for p in other],
             "customdata": [p["days"] for p in other], "name": _L(lang, "dominated", "被占优"),
             "marker": {"color": "#aaa", "size": 8}, "hovertemplate": hover},
            {"type": "scatter", "mode": "lines+markers", "x": [p["gpus"] for p in front], "y": [p["cost_cny"] for p in front],
             "customdata": [p["days"] for p in front], "name": _L(lang, "Pareto front (fewer days and less money)", "帕累托前沿（更快且更省）"),
             "marker": {"color": "#1f77b4", "size": 10}, "hovertemplate": hover}]
    if plan.cost:
        data.append({"type": "scatter", "mode": "markers", "x": [plan.gpus_recommended], "y": [plan.cost.total_cny],
                     "name": _L(lang, "recommended", "建议规模"), "marker": {"size": 14, "color": "#d62728", "symbol": "star"}})
    fig = {"data": data, "layout": _layout(_L(lang, "Lease cost vs cards", "租金与卡数"), _L(lang, "cards", "卡数"), "CNY",
                                           xaxis=_log_axis(_L(lang, "cards", "卡数"), [p["gpus"] for p in priced]))}
    return Figure("cost_vs_cards", _L(lang, "Lease cost vs cards", "租金与卡数"), _L(
        lang, "Lease cost at each size = cards × lease hours (rounded up to the lease unit) × price. A point is on the Pareto front "
        "when no other size is both faster and cheaper.",
        "每个规模的租金 = 卡数 × 租期小时（按租期单位向上取整）× 单价。没有其他规模同时更快又更便宜的点在帕累托前沿上。"), fig)


# ------------------------------------------------------------------ sections other modules fill in

def _numeric_items(d: Any) -> list[tuple[str, float]]:
    if not isinstance(d, dict):
        return []
    return [(str(k), float(v)) for k, v in d.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0]


def _find(d: Any, *keys: str) -> Any:
    for k in keys:
        if isinstance(d, dict) and d.get(k) is not None:
            return d[k]
    return None


def memory_items(layout: dict | None) -> tuple[list[tuple[str, float]], float | None]:
    """(name, GB) per component of the memory per card, and the card's capacity if known."""
    if not isinstance(layout, dict):
        return [], None
    bd = layout.get("breakdown") if isinstance(layout.get("breakdown"), dict) else {}
    mem = _find(layout, "memory_breakdown", "memory", "memory_gb_breakdown") or _find(bd, "memory", "memory_gb", "memory_bytes")
    items = _numeric_items(mem)
    if not items:  # flat breakdown with *_gb / *_bytes keys
        items = [(k, v) for k, v in _numeric_items(bd) if k.endswith(("_gb", "_bytes")) and "per_s" not in k]
    out = []
    for k, v in items:
        if k in ("total", "total_gb", "total_bytes", "capacity_gb"):
            continue
        gb = v / 1e9 if k.endswith("_bytes") or v > 1e6 else v
        out.append((k.removesuffix("_gb").removesuffix("_bytes"), gb))
    if not out and isinstance(layout.get("memory_gb_per_gpu"), (int, float)):  # only the total is known
        out = [("total", float(layout["memory_gb_per_gpu"]))]
    cap = _find(layout, "memory_capacity_gb", "capacity_gb")
    return out, (float(cap) if isinstance(cap, (int, float)) else None)


def time_items(layout: dict | None) -> list[tuple[str, float]]:
    """(name, seconds) per component of one training step."""
    if not isinstance(layout, dict):
        return []
    bd = layout.get("breakdown") if isinstance(layout.get("breakdown"), dict) else {}
    t = _find(layout, "time_breakdown", "step_breakdown") or _find(bd, "time", "time_s", "step")
    items = _numeric_items(t)
    if not items:
        items = [(k, v) for k, v in _numeric_items(bd) if k.endswith(("_s", "_time", "_seconds")) and k not in ("step_time_s", "total_s")]
    if not items and "step_time_s" in layout:  # kashu.perf: a flat breakdown of the step, in seconds
        items = [(k, v) for k, v in _numeric_items(bd) if not k.endswith(("_gb", "_bytes"))]
    return [(k.removesuffix("_s").removesuffix("_time").removesuffix("_seconds"), v) for k, v in items]


def _layout_name(layout: dict | None) -> str:
    if not isinstance(layout, dict) or "tp" not in layout:
        return ""
    return " (" + " ".join(f"{k.upper()}{layout[k]}" for k in ("tp", "pp", "dp", "cp", "ep") if layout.get(k, 1) != 1 or k == "dp") + ")"


def memory_figure(plan, lang: str) -> Figure | None:
    items, cap = memory_items(plan.layout)
    if not items:
        return None
    cap = cap or plan.gpu.memory_gb
    data = [{"type": "bar", "orientation": "h", "y": [_L(lang, "per card", "每卡")], "x": [v], "name": k,
             "hovertemplate": f"{k}: %{{x:.1f}} GB<extra></extra>"} for k, v in items]
    fig = {"data": data, "layout": _layout(_L(lang, "Memory per card", "每卡显存"), "GB", "", barmode="stack", height=220,
                                           shapes=[{"type": "line", "x0": cap, "x1": cap, "yref": "paper", "y0": 0, "y1": 1,
                                                    "line": {"dash": "dash", "color": "#d62728"}}])}
    return Figure("memory", _L(lang, "Memory per card", "每卡显存"), _L(
        lang, f"Memory per card of the chosen layout{_layout_name(plan.layout)} (weights, gradients, optimizer states, activations when "
        f"the predictor itemises them); the dashed line is the card's {cap:g} GB.",
        f"所选并行布局{_layout_name(plan.layout)}的每卡显存（预测器给出明细时分项显示）；虚线为卡的 {cap:g} GB 显存。"), fig)


def step_time_figure(plan, lang: str) -> Figure | None:
    items = time_items(plan.layout)
    if not items:
        return None
    data = [{"type": "bar", "x": [k for k, _ in items], "y": [v for _, v in items],
             "hovertemplate": "%{x}: %{y:.3g} s<extra></extra>", "marker": {"color": "#2ca02c"}}]
    fig = {"data": data, "layout": _layout(_L(lang, "Where the step time goes", "单步时间构成"), "", _L(lang, "seconds per step", "每步秒数"))}
    return Figure("step_time", _L(lang, "Where the step time goes", "单步时间构成"), _L(
        lang, f"Predicted time of one training step{_layout_name(plan.layout)} by component: GEMMs, attention, memory-bound kernels, "
        "communication not hidden, pipeline bubble.",
        f"一个训练步{_layout_name(plan.layout)}按组成部分的预测时间：矩阵乘、注意力、访存受限算子、未被掩盖的通信、流水线气泡。"), fig)


def timeline_figure(plan, lang: str) -> Figure | None:
    rel = plan.reliability
    if not isinstance(rel, dict):
        return None
    mttf = _find(rel, "mttf_hours")
    ckpt_min = _find(rel, "checkpoint_interval_min")
    if not isinstance(mttf, (int, float)) or not isinstance(ckpt_min, (int, float)) or mttf <= 0 or ckpt_min <= 0:
        return None
    restart_h = float(_find(rel, "restart_min", "restart_time_min", "recovery_min") or 10.0) / 60.0
    ckpt_h = ckpt_min / 60.0
    horizon = min(max(plan.days * 24.0, 3 * mttf, 4 * ckpt_h), 24.0 * 30)
    horizon = max(horizon, ckpt_h * 2)
    steps_max = 2000
    xs, ys, fails, ckpts = [0.0], [0.0], [], []
    t, progress, saved, next_fail, next_ckpt = 0.0, 0.0, 0.0, float(mttf), ckpt_h
    dt = max(horizon / steps_max, 1e-3)
    while t < horizon and len(xs) < 4 * steps_max:
        nxt = min(next_fail, next_ckpt, t + dt, horizon)
        progress += nxt - t
        t = nxt
        xs.append(t)
        ys.append(progress)
        if t >= next_ckpt - 1e-12 and next_ckpt <= next_fail:
            saved = progress
            ckpts.append(t)
            next_ckpt = t + ckpt_h
        if t >= next_fail - 1e-12:
            fails.append(t)
            progress = saved
            xs.append(t)
            ys.append(progress)
            t += restart_h
            xs.append(t)
            ys.append(progress)
            next_fail = t + float(mttf)
            next_ckpt = t + ckpt_h
    data = [{"type": "scatter", "mode": "lines", "x": xs, "y": ys, "name": _L(lang, "training progress", "训练进度"),
             "hovertemplate": "%{x:.1f} h → %{y:.1f} h<extra></extra>"},
            {"type": "scatter", "mode": "markers", "x": fails, "y": [0] * len(fails), "name": _L(lang, "failure (expected)", "预期故障"),
             "marker": {"symbol": "x", "color": "#d62728", "size": 10}}]
    fig = {"data": data, "layout": _layout(_L(lang, "Failures and checkpoints", "故障与检查点"), _L(lang, "wall-clock hours", "墙钟小时"),
                                           _L(lang, "hours of training kept", "保留的训练小时"))}
    return Figure("timeline", _L(lang, "Failures and checkpoints", "故障与检查点"), _L(
        lang, f"A failure every MTTF = {mttf:.3g} h rolls the job back to the last checkpoint (every {ckpt_min:.3g} min) and costs a restart.",
        f"每隔 MTTF = {mttf:.3g} 小时一次故障，任务回滚到最近的检查点（每 {ckpt_min:.3g} 分钟一次）并需要重启。"), fig)


def risk_figure(plan, lang: str) -> Figure | None:
    risk = plan.risk
    if not isinstance(risk, dict):
        return None
    samples = _find(risk, "days_samples", "samples_days")
    if isinstance(samples, list) and samples:
        data = [{"type": "histogram", "x": samples[:20000], "name": _L(lang, "days", "天数"), "marker": {"color": "#9467bd"}}]
    else:
        qs = [(k, risk.get(f"days_{k}")) for k in ("p10", "p50", "p90")]
        qs = [(k.upper(), float(v)) for k, v in qs if isinstance(v, (int, float))]
        if not qs:
            return None
        data = [{"type": "bar", "x": [k for k, _ in qs], "y": [v for _, v in qs], "marker": {"color": "#9467bd"},
                 "hovertemplate": "%{x}: %{y:.1f}<extra></extra>", "name": _L(lang, "days", "天数")}]
    shapes = []
    if plan.deadline_days:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": plan.deadline_days, "y1": plan.deadline_days,
                       "line": {"dash": "dash", "color": "#d62728"}})
    pm = risk.get("p_miss_deadline")
    extra = (_L(lang, f" Probability of missing the deadline: {pm:.0%}.", f" 超期概率：{pm:.0%}。")
             if isinstance(pm, (int, float)) else "")
    c50, c90 = risk.get("cost_p50_cny"), risk.get("cost_p90_cny")
    if isinstance(c50, (int, float)) and isinstance(c90, (int, float)):
        extra += _L(lang, f" Cost P50 ¥{c50:,.0f}, P90 ¥{c90:,.0f}.", f" 成本 P50 ¥{c50:,.0f}，P90 ¥{c90:,.0f}。")
    fig = {"data": data, "layout": _layout(_L(lang, "Risk: days", "风险：天数分布"), "", _L(lang, "days", "天"), shapes=shapes)}
    return Figure("risk", _L(lang, "Risk: days", "风险：天数分布"), _L(
        lang, "Monte Carlo over MFU, failure rate, price and restart time: P10 / P50 / P90 of the days." + extra,
        "对 MFU、故障率、价格和重启时间做蒙特卡洛模拟：天数的 P10 / P50 / P90。" + extra), fig)


def figures(req, plan, lang: str = "en", sweep_points: int = SWEEP_POINTS) -> list[Figure]:
    """All the figures this plan has data for."""
    out: list[Figure] = []
    pts = sweep(req, plan, sweep_points) if req is not None else []
    if pts:
        out.append(days_vs_cards(pts, plan, lang))
        f = cost_vs_cards(pts, plan, lang)
        if f:
            out.append(f)
    for fn in (memory_figure, step_time_figure, timeline_figure, risk_figure):
        try:
            f = fn(plan, lang)
        except (TypeError, ValueError, KeyError, AttributeError):
            f = None  # a section in a shape this renderer does not know yet: leave its chart out
        if f:
            out.append(f)
    return out

"""The plan as Markdown: inputs, result, the working (formula and source per step), advice, warnings."""

from __future__ import annotations

from ..advice import TIER_NAMES
from ..i18n import t
from ..planner import Plan
from ..quantities import format_count, format_days, format_money
from .terminal import _fmt


def _cell(s: object) -> str:
    """Text safe inside a Markdown table cell (and not HTML when rendered)."""
    return (str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
            .replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def render_markdown(p: Plan, lang: str = "en") -> str:
    zh = lang == "zh"
    inp = p.inputs
    node = p.gpu.gpus_per_node
    L: list[str] = [f"# {t('plan_title', lang)}", ""]
    L += [f"| {'输入' if zh else 'Input'} | {t('value', lang)} |", "|---|---|"]
    L.append(f"| {t('params', lang)} | {format_count(inp['params'], lang)} |")
    L.append(f"| {t('tokens', lang)} | {format_count(inp['tokens'], lang)}{' (Chinchilla)' if inp.get('tokens_chinchilla') else ''} |")
    L.append(f"| {t('gpu', lang)} | {_cell(p.gpu.name)} ({p.gpu.bf16_tflops:g} TFLOPS dense BF16, {p.gpu.memory_gb:g} GB) |")
    if p.deadline_days:
        L.append(f"| {t('deadline', lang)} | {format_days(p.deadline_days, lang)} |")
    L.append(f"| {t('mfu', lang)} | {p.mfu:.0%} ({_cell(inp.get('mfu_source', ''))}) |")
    L += ["", f"## {t('result', lang)}", ""]
    L += [f"| | {t('value', lang)} |", "|---|---|"]
    L.append(f"| {t('gpus_min', lang)} | {p.gpus_min:,} |")
    L.append(f"| {t('gpus_needed', lang)} | {p.gpus_needed:,} |")
    L.append(f"| **{t('gpus_recommended', lang)}** | **{p.gpus_recommended:,} {t('cards', lang)}** = {p.gpus_recommended / node:g} × {node} |")
    L.append(f"| {t('days', lang)} | {format_days(p.days, lang)} |")
    L.append(f"| {t('tier', lang)} | {TIER_NAMES[p.tier][1 if zh else 0]} |")
    if p.cost:
        c = p.cost
        L.append(f"| **{t('cost', lang)}** | **{format_money(c.total_cny, lang)}** ({c.lease_units} × {c.lease_unit}, "
                 f"¥{c.price_cny_per_card_hour:.2f}/{'卡时' if zh else 'card-hour'}) |")
        L.append(f"| {t('pay_per_hour', lang)} | {format_money(c.pay_per_hour_cny, lang)} |")
        L.append(f"| {t('idle', lang)} | {format_money(c.idle_cny, lang)} |")
        L.append(f"| {t('per_mtok', lang)} | ¥{c.cost_per_million_tokens_cny:,.2f} |")
        L.append(f"| {t('price_source', lang)} | {_cell(c.source)} ({_cell(c.price_as_of)}) |")
    L += ["", f"## {t('working', lang)}", ""]
    L += [f"| {t('step', lang)} | {t('formula', lang)} | {t('value', lang)} | {t('source', lang)} |", "|---|---|---:|---|"]
    for s in p.steps:
        L.append(f"| {_cell(s.zh if zh else s.en)} | `{s.formula.replace('`', '')}` | {_cell(_fmt(s.value, s.unit, lang))} | {_cell(s.source)} |")
    for name in ("layout", "network", "storage", "reliability", "power", "risk"):
        sec = getattr(p, name, None)
        if isinstance(sec, dict) and sec:
            L += ["", f"## {name}", "", "| | |", "|---|---|"]
            for k, v in sec.items():
                if isinstance(v, float):
                    v = f"{v:.4g}"
                L.append(f"| {_cell(k)} | {_cell(v)[:300]} |")
    if p.advice:
        L += ["", f"## {t('advice', lang)}", ""]
        for a in p.advice:
            L.append(f"- {'⚠ ' if a.level == 'warn' else ''}{_cell(a.text(lang))} _({_cell(a.source)})_")
    warns = p.warnings_zh if zh else p.warnings
    if warns:
        L += ["", f"## {t('warnings', lang)}", ""]
        L += [f"- {_cell(w)}" for w in warns]
    if p.defaults_used:
        L += ["", f"## {t('defaults', lang)}", ""]
        L += [f"- `{k}`: {_cell(v)}" for k, v in p.defaults_used.items()]
    L.append("")
    return "\n".join(L)

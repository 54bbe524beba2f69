"""The plan in a terminal: inputs, each step of the arithmetic, the result, advice, warnings."""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from ..advice import TIER_NAMES
from ..i18n import t
from ..planner import Plan
from ..quantities import format_count, format_days, format_money
from .infra import render_infra
from .plan_sections import render_layout, render_lease


def _fmt(value: float, unit: str, lang: str) -> str:
    if unit == "FLOPs":
        return f"{value:.3g} FLOPs"
    if unit == "FLOP/s":
        return f"{value / 1e12:,.0f} TFLOPS"
    if unit == "card-hours":
        return f"{value:,.0f} " + ("卡时" if lang == "zh" else "card-hours")
    if unit == "cards":
        return f"{value:,.0f} " + t("cards", lang)
    if unit == "days":
        return format_days(value, lang)
    if unit == "CNY":
        return format_money(value, lang)
    if unit == "tokens":
        return format_count(value, lang)
    return f"{value:.4g} {unit}"


def render_plan(p: Plan, console: Console, lang: str = "en", brief: bool = False) -> None:
    """The whole plan; `brief`: only the inputs, the working, the result and the warnings."""
    zh = lang == "zh"
    inp = p.inputs
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row(t("params", lang), format_count(inp["params"], lang))
    head.add_row(t("tokens", lang), format_count(inp["tokens"], lang) + (" (Chinchilla)" if inp.get("tokens_chinchilla") else ""))
    head.add_row(t("gpu", lang), f"{p.gpu.name} ({p.gpu.bf16_tflops:g} TFLOPS dense BF16, {p.gpu.memory_gb:g} GB)")
    if p.deadline_days:
        head.add_row(t("deadline", lang), format_days(p.deadline_days, lang))
    src = (inp.get("mfu_source_zh") if zh else None) or inp["mfu_source"]
    if src.startswith("default"):
        src = "默认值，见下方来源" if zh else "default, sourced below"
    elif zh and src.startswith("user"):
        src = "用户给定（--mfu）"
    head.add_row(t("mfu", lang), f"{p.mfu:.0%}  [dim]({src})[/dim]")
    console.print(Panel(head, title=t("plan_title", lang), expand=False))

    tab = Table(title=t("working", lang), show_lines=False, expand=False)
    tab.add_column(t("step", lang))
    tab.add_column(t("formula", lang), style="cyan")
    tab.add_column(t("value", lang), justify="right", style="bold")
    for s in p.steps:
        tab.add_row(s.zh if zh else s.en, s.formula, _fmt(s.value, s.unit, lang))
    console.print(tab)

    res = Table.grid(padding=(0, 2))
    res.add_column(style="bold")
    res.add_column()
    node = p.gpu.gpus_per_node
    res.add_row(t("gpus_min", lang), f"{p.gpus_min:,}")
    res.add_row(t("gpus_needed", lang), f"{p.gpus_needed:,}")
    res.add_row(t("gpus_recommended", lang),
                f"[green]{p.gpus_recommended:,} {t('cards', lang)}[/green] = {p.gpus_recommended / node:g} × {node}")
    res.add_row(t("days", lang), format_days(p.days, lang))
    name_en, name_zh = TIER_NAMES[p.tier]
    res.add_row(t("tier", lang), name_zh if zh else name_en)
    if p.cost:
        c = p.cost
        res.add_row(t("cost", lang), f"[green]{format_money(c.total_cny, lang)}[/green]  "
                    f"({c.lease_units} × {c.lease_unit}, ¥{c.price_cny_per_card_hour:.2f}/card-hour)")
        res.add_row(t("pay_per_hour", lang), format_money(c.pay_per_hour_cny, lang))
        res.add_row(t("idle", lang), format_money(c.idle_cny, lang))
        res.add_row(t("per_mtok", lang), f"¥{c.cost_per_million_tokens_cny:,.2f}")
        res.add_row(t("price_source", lang), f"[dim]{c.source} ({c.price_as_of})[/dim]")
    for extra in getattr(p, "_render_extra", []):
        res.add_row(*extra)
    console.print(Panel(res, title=t("result", lang), expand=False))
    if not brief:
        render_layout(p, console, lang)
        render_infra(p, console, lang)
        render_lease(p, console, lang)
    if p.advice and not brief:
        console.print(f"[bold]{t('advice', lang)}[/bold]")
        for a in p.advice:
            mark = "[yellow]![/yellow]" if a.level == "warn" else "•"
            console.print(f" {mark} {a.text(lang)} [dim]({a.source})[/dim]")
    warns = p.warnings_zh if zh else p.warnings
    if warns:
        console.print(f"[bold yellow]{t('warnings', lang)}[/bold yellow]")
        for w in warns:
            console.print(f" [yellow]![/yellow] {w}")
    if p.defaults_used and not brief:
        console.print(f"[bold]{t('defaults', lang)}[/bold]")
        for key, source in p.defaults_used.items():
            console.print(f" [dim]{key}: {source}[/dim]")

"""`kashu compare` (scenarios side by side) and `kashu sweep` (cluster sizes → days vs cost, Pareto front)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from ..i18n import detect_lang
from ..quantities import format_money
from ..scenarios import compare, sweep
from . import LangOpt, app, emit_json
from .renting_opts import renting_inputs

DbOpt = typer.Option(None, "--db", help="Price book (file or SQLAlchemy URL; default $KASHU_DB, else the user data dir).")


def _opts(**kw) -> dict:
    return {k: v for k, v in kw.items() if v not in (None, "")}


@app.command("compare")
def compare_cmd(
    params: str = typer.Option(None, "--params", help="Parameters N; a list compares: 7B,13B."),
    model: str = typer.Option(None, "--model", help="Model preset(s) instead of --params: llama3-8b,qwen2.5-14b."),
    tokens: str = typer.Option(None, "--tokens", help="Training tokens D; a list compares: 1T,2T."),
    gpu: str = typer.Option("H800", "--gpu", help="Card type(s): H800,H20,910B."),
    framework: str = typer.Option(None, "--framework", help="Training stack(s) for the predicted MFU: modern,fsdp."),
    fabric: str = typer.Option(None, "--fabric", help="Network fabric(s): eth100,roce400,ib_ndr."),
    nics_per_node: str = typer.Option(None, "--nics-per-node", help="Compute NICs per node: 1,8."),
    failure_rate: str = typer.Option(None, "--failure-rate", help="Interruptions per card-day: 4.7e-4,2e-3."),
    days: str = typer.Option(None, "--days", help="Deadline(s) → cards."),
    gpus: str = typer.Option(None, "--gpus", help="Card count(s) → days: 64,256."),
    budget: str = typer.Option(None, "--budget", help="Budget(s) → the largest cluster."),
    mfu: str = typer.Option(None, "--mfu", help="MFU fraction(s)."),
    method: str = typer.Option(None, "--method", help="full or lora (or both)."),
    precision: str = typer.Option(None, "--precision", help="bf16, fp8."),
    redundancy: str = typer.Option(None, "--redundancy", help="Spare share(s) of the cluster."),
    lease: str = typer.Option(None, "--lease", help="Lease unit(s): day, week, month, quarter."),
    stage: str = typer.Option(None, "--stage", help="explore, train, iterate."),
    data_must_stay_local: str = typer.Option(None, "--data-must-stay-local", help="yes, no, or yes,no to compare local vs remote."),
    subsidy: str = typer.Option(None, "--subsidy", help="Subsidy share(s) of the lease."),
    db: str = DbOpt,
    json_out: bool = typer.Option(False, "--json", help="Print {\"scenarios\": [plan, ...], \"two_phase\": ...}."),
    lang: str = LangOpt,
) -> None:
    """Plan several scenarios side by side (any option may be a comma-separated list); with two card counts,
    the article's two-phase plan (prove the pipeline on the small one, then train on the big one)."""
    lang = detect_lang(lang)
    opts = _opts(params=params, model=model, framework=framework, fabric=fabric, nics_per_node=nics_per_node,
                 failure_rate=failure_rate, tokens=tokens, gpu=gpu, days=days, gpus=gpus, budget=budget, mfu=mfu, method=method,
                 precision=precision, redundancy=redundancy, lease=lease, stage=stage,
                 data_must_stay_local=data_must_stay_local, subsidy=subsidy, lang=lang)
    opts["quotes"] = renting_inputs(db)["quotes"]
    res = compare(opts)
    if json_out:
        emit_json(res)
        return
    zh = lang == "zh"
    tab = Table(title="场景对比" if zh else "Scenarios")
    for en, z in [("#", "#"), ("scenario", "场景"), ("cards", "卡数"), ("days", "天数"), ("cost", "租金"),
                  ("days P50/P90", "天数 P50/P90"), ("cost P90", "租金 P90"), ("P(miss)", "误期概率"), ("price", "价格来源")]:
        tab.add_column(z if zh else en)
    notes: dict[str, list[str]] = {}
    for i, s in enumerate(res["scenarios"], 1):
        r = s.get("risk") or {}
        name = ", ".join(f"{k}={v}" for k, v in s["scenario"].items()) or s["gpu"]["name"]
        c = s["cost"]["total_cny"]
        src = str(s["cost"].get("source", ""))
        src = src if src.startswith("quote") else ("参考价" if zh else "reference")
        tab.add_row(str(i), name, str(s["gpus_recommended"]), f"{s['days']:.1f}",
                    format_money(c, lang) if c is not None else "—",
                    f"{r.get('days_p50', 0):.1f} / {r.get('days_p90', 0):.1f}",
                    format_money(r["cost_p90_cny"], lang) if r.get("cost_p90_cny") else "—",
                    "—" if r.get("p_miss_deadline") is None else f"{r['p_miss_deadline']:.0%}", src)
        picks = [a for a in s["advice"] if a["level"] == "warn"] + [
            a for a in s["advice"] if a["rule"] in ("site.deployment", "stage.prove_small")]
        for a in picks[:2]:
            notes.setdefault(a["zh"] if zh else a["en"], []).append(str(i))
    con = Console()
    con.print(tab)
    for text_, idx in notes.items():
        con.print(f" [{','.join(idx)}] {text_}")
    tp = res.get("two_phase")
    if tp:
        p1, p2 = tp["phase1"], tp["phase2"]
        con.print("[bold]两阶段方案[/bold]（原文：先租64卡跑通，再上256卡）" if zh else
                   "[bold]Two-phase plan[/bold] (the article: prove on 64, then 256)")
        con.print(f" 1. {p1['gpus']} {'张卡' if zh else 'cards'} × {p1['days']:g} {'天' if zh else 'days'}: "
                  f"{format_money(p1['cost_cny'], lang)}  ({p1['purpose_zh'] if zh else p1['purpose']})")
        con.print(f" 2. {p2['gpus']} {'张卡' if zh else 'cards'} × {p2['days']:.1f} {'天' if zh else 'days'}: "
                  f"{format_money(p2['cost_cny'], lang) if p2['cost_cny'] is not None else '—'}  "
                  f"({p2['purpose_zh'] if zh else p2['purpose']})")
        if tp["total_cost_cny"] is not None:
            con.print(f" {'合计' if zh else 'Total'}: {tp['total_days']:.1f} {'天' if zh else 'days'}, "
                      f"{format_money(tp['total_cost_cny'], lang)}")
        con.print(f" {tp['advice_zh'] if zh else tp['advice']}")


@app.command("sweep")
def sweep_cmd(
    params: str = typer.Option(None, "--params", help="Parameters N."),
    tokens: str = typer.Option(None, "--tokens", help="Training tokens D."),
    gpu: str = typer.Option("H800", "--gpu", help="Card type."),
    days: str = typer.Option(None, "--days", help="Deadline: the recommended point is the cheapest that meets it (P90)."),
    sizes: str = typer.Option(None, "--sizes", help="Card counts to try, e.g. 64,128,256 (default: whole nodes 8..4096)."),
    mfu: float = typer.Option(None, "--mfu", help="MFU fraction."),
    method: str = typer.Option("full", "--method", help="full or lora."),
    precision: str = typer.Option("bf16", "--precision", help="bf16 or fp8."),
    lease: str = typer.Option(None, "--lease", help="Lease unit (default by tier and length)."),
    stage: str = typer.Option(None, "--stage", help="explore, train, iterate."),
    data_must_stay_local: bool = typer.Option(False, "--data-must-stay-local", help="Data must not leave Beijing."),
    db: str = DbOpt,
    json_out: bool = typer.Option(False, "--json", help="Print {\"points\": [{gpus, days, cost_cny, pareto, recommended, ...}]}."),
    lang: str = LangOpt,
) -> None:
    """Walk cluster sizes: the days-vs-cost curve, its Pareto front and one recommended size."""
    lang = detect_lang(lang)
    size_list = None
    if sizes:
        from ..errors import KashuError

        try:
            size_list = [int(x) for x in sizes.split(",") if x.strip()]
        except ValueError:
            raise KashuError(f"--sizes {sizes!r} must be card counts like 64,128,256",
                             f"--sizes {sizes!r} 应为 64,128,256 这样的卡数", "sizes") from None
    opts = _opts(params=params, tokens=tokens, gpu=gpu, days=days, mfu=mfu, method=method, precision=precision,
                 lease=lease, stage=stage, data_must_stay_local=data_must_stay_local, lang=lang)
    opts["quotes"] = renting_inputs(db)["quotes"]
    res = sweep(opts, size_list)
    if json_out:
        emit_json(res)
        return
    zh = lang == "zh"
    tab = Table(title=(f"{res['gpu']} 集群规模扫描：天数 vs 租金" if zh else f"{res['gpu']} cluster sizes: days vs cost"))
    for en, z in [("cards", "卡数"), ("days", "天数"), ("days P50/P90", "天数 P50/P90"), ("cost", "租金"),
                  ("cost P90", "租金 P90"), ("lease", "租期"), ("Pareto", "帕累托"), ("", "")]:
        tab.add_column(z if zh else en)
    for p in res["points"]:
        tab.add_row(str(p["gpus"]), f"{p['days']:.1f}", f"{p['days_p50']:.1f} / {p['days_p90']:.1f}",
                    format_money(p["cost_cny"], lang), format_money(p["cost_p90_cny"], lang) if p["cost_p90_cny"] else "—",
                    p["lease_unit"], "●" if p["pareto"] else "", ("[green]← 推荐[/green]" if zh else "[green]← recommended[/green]")
                    if p["recommended"] else "")
    con = Console()
    con.print(tab)
    con.print(f"[dim]{'推荐规则' if zh else 'rule'}: {res['rule']}[/dim]")

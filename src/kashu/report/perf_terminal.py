"""Terminal output of `kashu step`, `kashu layout` and `kashu validate` (English / Chinese)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

BREAKDOWN_ZH = {"gemm": "矩阵乘", "attention": "注意力", "memory_bound": "访存密集算子", "tp_comm": "张量并行通信",
                "moe_all_to_all": "MoE all-to-all", "cp_comm": "上下文并行通信", "recompute": "重计算",
                "pipeline_bubble": "流水线气泡", "pp_p2p": "流水线点对点", "dp_comm": "数据并行梯度同步",
                "optimizer": "优化器", "overlap_contention": "隐藏通信的算力争用"}


def _lay(lay: dict) -> str:
    s = f"TP{lay['tp']} PP{lay['pp']} DP{lay['dp']}"
    for k in ("cp", "ep", "vp"):
        if lay[k] > 1:
            s += f" {k.upper()}{lay[k]}"
    return s + f" mbs{lay['mbs']} {lay['recompute']}{' SP' if lay['sp'] else ''} ZeRO-{lay['zero']}"


def render_step(r: dict, console: Console, lang: str = "en") -> None:
    zh = lang == "zh"
    console.print(f"[bold]{r['model']}[/bold] · {r['gpus']} × {r['gpu']} · {_lay(r['layout'])}")
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold")
    g.add_column(justify="right")
    g.add_row("每步时间" if zh else "Step time", f"{r['step_time_s']:.2f} s")
    g.add_row("吞吐" if zh else "Throughput", f"{r['tokens_per_s']:,.0f} tokens/s ({r['tokens_per_s_per_gpu']:,.0f}/card)")
    g.add_row("单卡算力" if zh else "Per card", f"{r['tflops_per_gpu']:.0f} TFLOPS")
    g.add_row("MFU / HFU", f"{r['mfu']:.1%} / {r['hfu']:.1%}")
    fit = ("放得下" if zh else "fits") if r["fits"] else ("[red]放不下[/red]" if zh else "[red]does not fit[/red]")
    g.add_row("每卡显存" if zh else "Memory per card", f"{r['memory_gb_per_gpu']:.1f} GB ({fit})")
    console.print(g)
    t = Table(title="时间去向（每步）" if zh else "Where the time goes (per step)")
    t.add_column("部分" if zh else "Part")
    t.add_column("秒" if zh else "s", justify="right")
    for k, v in r["breakdown"].items():
        if v > 0:
            t.add_row(BREAKDOWN_ZH.get(k, k) if zh else k, f"{v:.3f}")
    console.print(t)


def render_layouts(res: list[dict], spec, gpu, gpus: int, gb: int, console: Console, lang: str = "en") -> None:
    zh = lang == "zh"
    title = (f"{spec.name} 在 {gpus} × {gpu.name} 上的最快切分（全局批 {gb}）" if zh
             else f"Fastest layouts of {spec.name} on {gpus} × {gpu.name} (global batch {gb})")
    t = Table(title=title)
    for col in (("#", "#"), ("Layout", "切分"), ("Step s", "每步秒"), ("MFU", "MFU"), ("tokens/s", "tokens/s"),
                ("GB/card", "显存/卡")):
        t.add_column(col[1] if zh else col[0], justify="left" if col[0] == "Layout" else "right")
    for i, r in enumerate(res, 1):
        t.add_row(str(i), _lay(r["layout"]), f"{r['step_time_s']:.2f}", f"{r['mfu']:.1%}", f"{r['tokens_per_s']:,.0f}",
                  f"{r['memory_gb_per_gpu']:.1f}")
    console.print(t)


def render_validation(res: dict, console: Console, lang: str = "en", rows: bool = False) -> None:
    zh = lang == "zh"
    t = Table(title="与公开测量对比" if zh else "Predictions vs published measurements")
    t.add_column("表" if zh else "Table")
    t.add_column("行" if zh else "Rows", justify="right")
    t.add_column("平均误差" if zh else "Mean |err|", justify="right")
    t.add_column("最大误差" if zh else "Max |err|", justify="right")
    for tab in res["tables"]:
        n = sum(1 for r in tab["rows"] if r.get("error_pct") is not None)
        mean = "—" if tab["mean_abs_error_pct"] is None else f"{tab['mean_abs_error_pct']:.1f}%"
        mx = "—" if tab["max_abs_error_pct"] is None else f"{tab['max_abs_error_pct']:.1f}%"
        t.add_row(tab["name"], str(n), mean, mx)
    console.print(t)
    if rows:
        for tab in res["tables"]:
            console.print(f"[bold]{tab['name']}[/bold]")
            for r in tab["rows"]:
                if r.get("error_pct") is None:
                    console.print(f"  {r['model']}: {r.get('skipped', '')}")
                else:
                    console.print(f"  {r['model']:<22} published {r['published']:>10.2f}  predicted {r['predicted']:>10.2f}"
                                  f"  {r['error_pct']:+6.1f}%")

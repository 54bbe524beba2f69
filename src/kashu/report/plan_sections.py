"""Plan sections for the terminal: the predicted layout with its scaling curve, and the lease options."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..quantities import format_money

_PARTS = {"gemm": ("GEMMs", "矩阵乘"), "attention": ("attention", "注意力"), "memory_bound": ("memory-bound", "访存受限"),
          "tp_comm": ("TP comm", "张量并行通信"), "cp_comm": ("CP comm", "上下文并行通信"),
          "moe_all_to_all": ("MoE all-to-all", "MoE all-to-all"), "recompute": ("recompute", "重计算"),
          "pipeline_bubble": ("pipeline bubble", "流水线气泡"), "pp_p2p": ("PP p2p", "流水线点对点"),
          "dp_comm": ("DP comm (exposed)", "数据并行通信（未隐藏）"), "optimizer": ("optimizer", "优化器"),
          "overlap_contention": ("hidden-comm contention", "隐藏通信的算力争用")}


def render_layout(p, console: Console, lang: str = "en") -> None:
    """Where the predicted MFU comes from: the best layout, where its step time goes, and the scaling curve."""
    lay = p.layout
    if not lay:
        return
    zh = lang == "zh"
    desc = (f"TP{lay['tp']} × PP{lay['pp']} × DP{lay['dp']}" + (f" × CP{lay['cp']}" if lay.get("cp", 1) > 1 else "")
            + (f" × EP{lay['ep']}" if lay.get("ep", 1) > 1 else "") + (f", {lay['vp']} virtual stages" if lay.get("vp", 1) > 1 else "")
            + f", micro-batch {lay['mbs']}, global batch {lay.get('global_batch')}, {lay['recompute']} recompute, ZeRO-{lay['zero']}")
    tab = Table(title="预测的并行布局" if zh else "Predicted parallel layout", expand=False)
    tab.add_column("项目" if zh else "Item")
    tab.add_column("数值" if zh else "Value", justify="right")
    tab.add_row("布局" if zh else "Layout", desc)
    tab.add_row("每步时间" if zh else "Step time", f"{lay['step_time_s']:.2f} s on {lay['gpus']} cards")
    tab.add_row("每卡显存" if zh else "Memory per card", f"{lay['memory_gb_per_gpu']:.1f} GB of {p.gpu.memory_gb:g} GB")
    bd = lay.get("breakdown") or {}
    total = sum(v for v in bd.values() if isinstance(v, (int, float))) or 1.0
    for k, v in sorted(bd.items(), key=lambda kv: -kv[1] if isinstance(kv[1], (int, float)) else 0):
        if isinstance(v, (int, float)) and v > 0.005 * total:
            name = _PARTS.get(k, (k, k))
            tab.add_row(f"  {name[1] if zh else name[0]}", f"{v:.2f} s ({v / total:.0%})")
    console.print(tab)
    curve = p.extras.get("scaling_curve") or []
    if len(curve) > 1:
        c = Table(title="扩展曲线（每卡吞吐 vs 卡数）" if zh else "Scaling curve (throughput per card vs cards)", expand=False)
        for h in (("卡数", "Cards"), ("每卡 token/s", "Tokens/s per card"), ("MFU", "MFU"), ("扩展效率", "Scaling eff."),
                  ("布局", "Layout")):
            c.add_column(h[0] if zh else h[1], justify="right")
        for pt in curve:
            lt = pt["layout"]
            c.add_row(f"{pt['gpus']:,}", f"{pt['tokens_per_s_per_gpu']:,.0f}", f"{pt['mfu']:.1%}",
                      f"{pt['scaling_efficiency']:.2f}", f"TP{lt['tp']} PP{lt['pp']} DP{lt['dp']}")
        console.print(c)


def render_lease(p, console: Console, lang: str = "en") -> None:
    """Pay-as-you-go vs monthly bare metal vs a quarter lock (and spot), each rounded to its unit."""
    lease = p.extras.get("lease") or {}
    opts = lease.get("options") or []
    if not opts:
        return
    zh = lang == "zh"
    tab = Table(title="租用方式对比" if zh else "Lease options", expand=False)
    for h in (("方式", "Option"), ("卡数", "Cards"), ("租期", "Term"), ("单价 ¥/卡时", "¥/card-hour"), ("总价", "Total"),
              ("闲置", "Idle"), ("每百万 token", "per M tokens"), ("价格来源", "Price source")):
        tab.add_column(h[0] if zh else h[1], justify="left" if h[1] in ("Option", "Price source") else "right")
    for o in opts:
        tab.add_row(o.get("name_zh" if zh else "name", o["option"]), f"{o['cards']:,}", f"{o['lease_units']} × {o['lease_unit']}",
                    f"{o['price_cny_per_card_hour']:.2f}", format_money(o["total_cny"], lang), format_money(o["idle_cny"], lang),
                    f"¥{o['cost_per_million_tokens_cny']:.2f}", o["source"].split(",")[0][:40])
    console.print(tab)

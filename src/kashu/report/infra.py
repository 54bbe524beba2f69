"""The cluster's bill of materials on one screen: nodes, cards, NICs, switches, storage, racks, power."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table


def _row(tab: Table, zh: bool, en_label: str, zh_label: str, value: str, rule: str = "") -> None:
    tab.add_row(zh_label if zh else en_label, value, f"[dim]{rule}[/dim]" if rule else "")


def render_infra(p: Any, console: Console, lang: str = "en") -> None:
    net, st, rel, pw = p.network, p.storage, p.reliability, p.power
    if not (net and st and rel and pw):
        return
    zh = lang == "zh"
    g = p.gpu.gpus_per_node
    tab = Table(title="集群物料清单" if zh else "Bill of materials", expand=False, show_header=True)
    tab.add_column("项目" if zh else "Item", style="bold")
    tab.add_column("数量" if zh else "Quantity", justify="right")
    tab.add_column("依据" if zh else "Rule")
    nodes = pw["nodes"]
    _row(tab, zh, "Nodes", "节点", f"{nodes:,} × {g} {p.gpu.name}",
         f"{p.gpus_recommended:,} 张卡 / 每节点 {g} 张" if zh else f"{p.gpus_recommended:,} cards / {g} per node")
    _row(tab, zh, "Cards", "卡", f"{p.gpus_recommended:,}",
         f"训练占用 {p.gpus_training:,.0f}，其余为冗余" if zh else f"training share {p.gpus_training:,.0f}, the rest in reserve")
    if net.get("nics"):
        _row(tab, zh, "Compute NICs", "计算网卡", f"{net['nics']:,} × {net['fabric_label']}",
             f"{net['nics_per_node']} per node (rails)" if not zh else f"每节点 {net['nics_per_node']} 块（轨道）")
        topo = net.get("topology") or {}
        tiers = topo.get("tiers", 0)
        parts = [f"{topo.get('leaf', 0)} leaf"] + ([f"{topo['spine']} spine"] if topo.get("spine") else []) \
            + ([f"{topo['core']} core"] if topo.get("core") else [])
        kind = ((f"{tiers} 层胖树" if zh else f"{tiers}-tier fat-tree") if tiers > 1 else ("单台交换机" if zh else "single switch"))
        _row(tab, zh, "Switches", "交换机", f"{net['switches']:,} ({', '.join(parts)})",
             f"{kind}, {topo.get('radix')}-port {net.get('switch_model', '')}"
             + ("" if topo.get("oversubscription", 1) == 1 else f", {topo['oversubscription']:g}:1 oversubscribed"))
        _row(tab, zh, "Cables / optics", "线缆 / 光模块", f"{net.get('cables', 0):,} / {net.get('optics', 0):,}",
             "one transceiver per link end" if not zh else "每条链路两端各一个光模块")
    else:
        _row(tab, zh, "Network", "网络", "NVLink only" if not zh else "仅节点内互联", "one node")
    eff = net["scaling_efficiency"]
    mark = "green" if eff >= net["bar"] else "red"
    _row(tab, zh, "Cross-node scaling", "跨节点扩展效率", f"[{mark}]{eff:.2f}[/{mark}] (≥ {net['bar']:.1f})",
         ((f"每步通信 {net['comm_s']:.2f} 秒，被计算掩盖 {net['overlap_s']:.2f} 秒，计算 {net['compute_s']:.2f} 秒" if zh else
           f"comm {net['comm_s']:.2f} s, hidden {net['overlap_s']:.2f} s, compute {net['compute_s']:.2f} s / step")
          if net.get("nics") else ""))
    _row(tab, zh, "Storage capacity", "存储容量", f"{st['capacity_tb']:,.1f} TB",
         (f"data {st['raw_tb']:,.1f} + tokens {st['tokenised_tb']:,.1f} + ckpt {st['checkpoint_tb']:,.2f}×{st['checkpoints_kept']}, ×{st['headroom']:g}; "
          f"article 3× data = {st['article_rule_tb']:,.1f} TB") if not zh else
         (f"原始 {st['raw_tb']:,.1f} + token {st['tokenised_tb']:,.1f} + ckpt {st['checkpoint_tb']:,.2f}×{st['checkpoints_kept']}，×{st['headroom']:g}；"
          f"文章 3 倍数据 = {st['article_rule_tb']:,.1f} TB"))
    _row(tab, zh, "Storage bandwidth", "存储带宽", f"≥ {st['bandwidth_gbps_recommended']:,.1f} GB/s",
         (f"checkpoint 写 {st['write_gbps_required']:,.2f}，数据读取 {st['read_gbps_required']:.3f}，下限 {st['floor_gbps']:g} GB/s" if zh else
          f"ckpt writes {st['write_gbps_required']:,.2f}, loading {st['read_gbps_required']:.3f}, floor {st['floor_gbps']:g} GB/s"))
    _row(tab, zh, "Storage type", "存储类型", "", st["recommendation_zh"] if zh else st["recommendation"])
    _row(tab, zh, "Racks", "机柜", f"{pw['racks']:,}",
         f"{pw['kw_per_rack']:g} kW/rack, {pw['nodes_per_rack']} node(s) per rack" if not zh else
         f"每柜 {pw['kw_per_rack']:g} kW，每柜 {pw['nodes_per_rack']} 台")
    _row(tab, zh, "Power (IT)", "功率（IT）", f"{pw['total_kw']:,.0f} kW",
         (f"每节点 {pw['node_kw']:.1f} kW + 网络 {pw['network_kw']:,.1f} kW；PUE {pw['pue']:g} → {pw['facility_kw']:,.0f} kW" if zh else
          f"{pw['node_kw']:.1f} kW/node + network {pw['network_kw']:,.1f} kW; PUE {pw['pue']:g} → {pw['facility_kw']:,.0f} kW"))
    if pw.get("energy_mwh") is not None:
        _row(tab, zh, "Energy for the run", "本次训练用电", f"{pw['energy_mwh']:,.0f} MWh", "IT kW × PUE × hours")
    console.print(tab)

    r = Table.grid(padding=(0, 2))
    r.add_column(style="bold")
    r.add_column()
    mttf = rel["mttf_hours"]
    r.add_row("故障率" if zh else "Failure rate", f"{rel['failure_rate_per_card_day']:.2g} {'次/卡/天' if zh else '/ card-day'}  "
              f"[dim]({rel['failure_rate_source'].split(':')[0]})[/dim]")
    if zh:
        r.add_row("作业 MTTF", "∞" if mttf is None else f"{mttf:,.1f} 小时 · 每天 {rel['interruptions_per_day']:.2f} 次"
                  + (f" · 全程约 {rel['expected_interruptions']:,.0f} 次" if rel.get("expected_interruptions") else ""))
    else:
        r.add_row("Job MTTF", "∞" if mttf is None else f"{mttf:,.1f} h  ·  {rel['interruptions_per_day']:.2f}/day"
                  + (f"  ·  ~{rel['expected_interruptions']:,.0f} in the run" if rel.get("expected_interruptions") else ""))
    ci = rel["checkpoint_interval_min"]
    r.add_row("Checkpoint", ("—" if ci is None else f"every {ci:,.0f} min (Daly), {rel['checkpoint_mode']}, stall {rel['checkpoint_stall_s']:.1f} s")
              if not zh else ("—" if ci is None else f"每 {ci:,.0f} 分钟（Daly），{'异步' if rel['checkpoint_mode'] == 'async' else '同步'}，停顿 {rel['checkpoint_stall_s']:.1f} 秒"))
    r.add_row("有效训练率" if zh else "Goodput", f"{rel['goodput']:.1%}"
              + (f"  (+{rel['extra_days']:.1f} {'天' if zh else 'd'}" + (f", ¥{rel['extra_cost_cny']:,.0f}" if rel.get("extra_cost_cny") else "") + ")"
                 if rel.get("extra_days") is not None else ""))
    r.add_row("热备节点" if zh else "Hot spares", f"{rel['hot_spare_nodes']} " + ("台" if zh else "node(s)")
              + ("  · elastic fault-tolerant scheduling required" if rel["elastic_required"] and not zh else "")
              + ("  · 需要弹性容错调度" if rel["elastic_required"] and zh else ""))
    console.print(Panel(r, title="故障与 checkpoint" if zh else "Failures and checkpoints", expand=False))

"""The plan as an Excel workbook whose input cells drive the outputs through live formulas.

Sheet "Plan": inputs (yellow) — parameters, tokens, MFU, dense peak, deadline (or cards), price, redundancy,
node size, scaling and goodput (the network and reliability models' values at the plan's cluster size, held
fixed in the sheet), lease unit — and outputs as real formulas: FLOPs, card-hours, cards for the
deadline, cards with losses, the recommended cluster, days, lease hours and cost. Edit the MFU or the
deadline in Excel and everything recomputes; the formulas are the planner's own (planner.py), so with the
inputs untouched they give the plan's figures. Sheets "Working" and "Advice" carry the text.
"""

from __future__ import annotations

import io

from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from ..advice import TIER_NAMES
from ..planner import Plan
from .terminal import _fmt

INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
OUTPUT_FILL = PatternFill("solid", fgColor="E2F0D9")
EPS = "1E-9"  # the planner rounds ⌈x − 1e-9⌉ so that exact multiples do not round up


def rows_for(p: Plan) -> list[tuple[str, str, str, object, str, str]]:
    """(key, English label, Chinese label, value or '=formula with {key} references', number format, unit)."""
    inp = p.inputs
    c = p.cost
    lora = inp.get("method") == "lora"
    peak = p.gpu.peak_flops_for(inp.get("precision", "bf16")) / 1e12
    from ..cost import LEASE_UNITS_HOURS

    unit_h = LEASE_UNITS_HOURS.get(c.lease_unit, 720.0) if c else 720.0
    rows: list[tuple[str, str, str, object, str, str]] = [
        ("h_in", "Inputs (edit the yellow cells)", "输入（可修改黄色单元格）", None, "", ""),
        ("params", "Parameters N", "参数量 N", float(inp["params"]), "0.00E+00", "params"),
        ("tokens", "Training tokens D", "训练数据量 D", float(inp["tokens"]), "0.00E+00", "tokens"),
        ("fpt", "FLOPs per token" + (" (LoRA, computed)" if lora else " = 6·N"), "每 token 算力" + ("（LoRA）" if lora else " = 6·N"),
         float(p.flops_per_token) if lora else "=6*{params}", "0.00E+00", "FLOPs"),
        ("mfu", "MFU", "算力利用率 MFU", float(p.mfu), "0.00%", ""),
        ("peak", f"Dense {inp.get('precision', 'bf16').upper()} peak per card", "单卡稠密峰值算力", float(peak), "#,##0.0", "TFLOPS"),
    ]
    mode = inp.get("mode", "days")
    if mode == "days":
        rows.append(("deadline", "Deadline", "期限", float(p.deadline_days), "#,##0.0", "days"))
        rows.append(("margin", "Schedule margin (median Monte Carlo days / point days; 1 = none)",
                     "进度余量（蒙特卡洛中位天数 / 点估计天数；1 为不加）", float(inp.get("schedule_margin") or 1.0), "0.000", ""))
        rows.append(("eff_n", "Scaling × goodput at the cards needed (network and reliability models)",
                     "所需卡数下的扩展效率 × 有效率", float(p.extras.get("scaling_at_needed", p.scaling_efficiency)
                                                   * p.extras.get("goodput_at_needed", p.goodput)), "0.0000", ""))
    else:
        rows.append(("cards_in", "Cards", "卡数", int(p.gpus_recommended), "#,##0", "cards"))
    rows += [
        ("price", "Price (lease mode)", "单价（租用方式）", float(c.price_cny_per_card_hour) if c else 0.0, "#,##0.00", "CNY/card-hour"),
        ("redundancy", "Redundancy (spare share)", "冗余比例", float(p.redundancy), "0%", ""),
        ("node", "Cards per node", "每节点卡数", int(p.gpu.gpus_per_node), "0", "cards"),
        ("xscale", "Scaling efficiency at this cluster size (network model; 1 when the MFU was predicted for it)",
         "该规模下的扩展效率（网络模型；MFU 按该规模预测时为 1）", float(p.scaling_efficiency), "0.0000", ""),
        ("goodput", "Goodput at this cluster size (reliability model: failures, checkpoints)",
         "该规模下的有效训练时间占比（可靠性模型）", float(p.goodput), "0.0000", ""),
        ("unit_h", f"Lease unit ({c.lease_unit if c else 'month'})", f"租期单位（{c.lease_unit if c else 'month'}）", float(unit_h), "#,##0", "hours"),
        ("h_out", "Outputs (formulas)", "输出（公式）", None, "", ""),
        ("flops", "Training compute C = FLOPs/token × D", "训练总算力 C", "={fpt}*{tokens}", "0.00E+00", "FLOPs"),
        ("card_hours", "Card-hours = C / (peak × MFU) / 3600", "卡时 = C / (峰值 × MFU) / 3600",
         "={flops}/({peak}*1000000000000*{mfu})/3600", "#,##0", "card-hours"),
    ]
    if mode == "days":
        per_h = "{card_hours}/({deadline}*24)"
        rows += [
            ("gpus_min", "Cards for the deadline (no losses)", "按期限所需卡数（不计损耗）",
             f"=MAX(1,ROUNDUP({per_h}-{EPS},0))", "#,##0", "cards"),
            ("gpus_needed", "Cards with scaling loss and goodput", "计入扩展损耗与有效率的卡数",
             f"=MAX(1,ROUNDUP({per_h}*{{margin}}/{{eff_n}}-{EPS},0))", "#,##0", "cards"),
            ("with_reserve", "Cards with the reserve (none for 1-2 card jobs)", "加冗余后的卡数（1-2 卡任务不加）",
             "=IF({gpus_needed}>2,{gpus_needed}*(1+{redundancy}),{gpus_needed})", "#,##0.0", "cards"),
            ("gpus_recommended", "Recommended cluster (whole nodes; 1/2/4 cards below half a node)",
             "建议集群（整机取整；不足半机按 1/2/4 卡）",
             f"=IF({{with_reserve}}<={{node}}/2,2^MAX(0,ROUNDUP(LOG(MAX({{with_reserve}},1),2)-{EPS},0)),"
             f"ROUNDUP({{with_reserve}}/{{node}}-{EPS},0)*{{node}})", "#,##0", "cards"),
            ("gpus_training", "Cards training (the rest is the reserve)", "训练用卡（其余为冗余）",
             "=IF({gpus_needed}>2,{gpus_recommended}/(1+{redundancy}),{gpus_recommended})", "#,##0.0", "cards"),
        ]
    else:
        rows += [
            ("gpus_recommended", "Cluster", "集群", "={cards_in}", "#,##0", "cards"),
            ("gpus_training", "Cards training", "训练用卡", "={cards_in}", "#,##0", "cards"),
        ]
    rows += [
        ("days", "Expected days", "预计天数",
         "={card_hours}/({gpus_training}*{xscale}*{goodput})/24", "#,##0.0", "days"),
        ("lease_hours", "Lease hours (whole lease units)", "租期小时（整租期）",
         f"=MAX(1,ROUNDUP({{days}}*24/{{unit_h}}-{EPS},0))*{{unit_h}}", "#,##0", "hours"),
        ("cost", "Lease cost = cluster × lease hours × price", "租金 = 集群 × 租期小时 × 单价",
         "={gpus_recommended}*{lease_hours}*{price}", "#,##0", "CNY"),
        ("cost_per_mtok", "Cost per million tokens", "每百万 token 成本", "={cost}/{tokens}*1000000", "#,##0.00", "CNY"),
    ]
    return rows


def plan_values(p: Plan) -> dict[str, float]:
    """The plan's own figures for the formula cells (what a test compares the recomputed workbook with)."""
    out = {"flops": p.total_flops, "card_hours": p.gpu_hours, "gpus_recommended": p.gpus_recommended, "days": p.days}
    if p.inputs.get("mode", "days") == "days":
        out.update(gpus_min=p.gpus_min, gpus_needed=p.gpus_needed)
    if p.cost:
        out.update(cost=p.cost.total_cny, lease_hours=p.cost.lease_hours, cost_per_mtok=p.cost.cost_per_million_tokens_cny)
    return out


def build_workbook(p: Plan, lang: str = "en") -> Workbook:
    zh = lang == "zh"
    wb = Workbook()
    ws = wb.active
    ws.title = "计划" if zh else "Plan"
    ws["A1"] = f"kashu — {p.gpu.name}" + (" 训练集群规划" if zh else " training cluster plan")
    ws["A1"].font = Font(bold=True, size=14)
    rows = rows_for(p)
    addr = {key: f"B{i + 3}" for i, (key, *_rest) in enumerate(rows)}
    for i, (key, en, zh_label, value, fmt, unit) in enumerate(rows):
        r = i + 3
        ws.cell(r, 1, zh_label if zh else en)
        if value is None:
            ws.cell(r, 1).font = Font(bold=True)
            continue
        if isinstance(value, str) and value.startswith("="):
            value = value.format(**addr)
            fill = OUTPUT_FILL
        else:
            fill = INPUT_FILL
        cell = ws.cell(r, 2, value)
        cell.number_format = fmt
        cell.fill = fill
        ws.cell(r, 3, unit)
        if key in ("gpus_recommended", "cost", "days"):
            cell.font = Font(bold=True)
    note_row = len(rows) + 4
    ws.cell(note_row, 1, "层级" if zh else "Tier").font = Font(bold=True)
    ws.cell(note_row, 2, TIER_NAMES[p.tier][1 if zh else 0])
    if p.cost:
        ws.cell(note_row + 1, 1, "价格来源" if zh else "Price source")
        ws.cell(note_row + 1, 2, f"{p.cost.source} ({p.cost.price_as_of})")
        ws.cell(note_row + 2, 1, "租期单位由层级决定；改变天数后请核对。" if zh else
                "The lease unit was chosen for this plan's tier and length; check it if you change the inputs much.")
    ws[addr["mfu"]].comment = Comment(p.inputs.get("mfu_source", ""), "kashu")
    ws.column_dimensions["A"].width = 52
    ws.column_dimensions["B"].width = 18
    ws.column_dimensions["C"].width = 16
    ws.freeze_panes = "A3"

    ws2 = wb.create_sheet("计算过程" if zh else "Working")
    head = ["步骤", "公式", "数值", "来源"] if zh else ["Step", "Formula", "Value", "Source"]
    ws2.append(head)
    for s in p.steps:
        ws2.append([s.zh if zh else s.en, s.formula, _fmt(s.value, s.unit, lang), s.source])
    for col, w in zip("ABCD", (44, 48, 18, 80), strict=True):
        ws2.column_dimensions[col].width = w
    for c in ws2[1]:
        c.font = Font(bold=True)

    ws3 = wb.create_sheet("建议" if zh else "Advice")
    ws3.append(["建议", "来源"] if zh else ["Advice", "Source"])
    for a in p.advice:
        ws3.append([a.text(lang), a.source])
    for w in (p.warnings_zh if zh else p.warnings):
        ws3.append([("警告：" if zh else "Warning: ") + w, ""])
    ws3.column_dimensions["A"].width = 100
    ws3.column_dimensions["B"].width = 60
    for row in ws3.iter_rows(min_row=2):
        row[0].alignment = Alignment(wrap_text=True, vertical="top")
    for c in ws3[1]:
        c.font = Font(bold=True)
    wb.calculation.fullCalcOnLoad = True  # Excel/LibreOffice compute every formula when the file opens
    _ = get_column_letter  # (kept for callers that extend the sheet)
    return wb


def render_xlsx(p: Plan, lang: str = "en") -> bytes:
    buf = io.BytesIO()
    build_workbook(p, lang).save(buf)
    return buf.getvalue()

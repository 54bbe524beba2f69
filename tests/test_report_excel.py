"""The Excel report: read the workbook back, recompute its formulas in Python, compare with the plan."""

import io
import math
import re

import openpyxl
import pytest

import kashu
from kashu.planner import PlanRequest
from kashu.report.excel import plan_values, render_xlsx, rows_for

_FUNCS = {
    "ROUNDUP": lambda x, d=0: math.ceil(x * 10**d - 1e-12) / 10**d if x >= 0 else -math.ceil(-x * 10**d - 1e-12) / 10**d,
    "MAX": max, "MIN": min,
    "IF": lambda c, a, b: a if c else b,
    "OR": lambda *a: any(a), "AND": lambda *a: all(a),
    "LOG": lambda x, b=10: math.log(x, b),
}


def evaluate(ws, ref: str, cache: dict) -> float:
    """A small evaluator for the formulas the report writes: + - * / ^, comparisons, ROUNDUP MAX MIN IF OR AND LOG."""
    if ref in cache:
        return cache[ref]
    v = ws[ref].value
    if isinstance(v, str) and v.startswith("="):
        expr = v[1:]
        assert re.fullmatch(r"[A-Z0-9.,()+\-*/^<>=E ]+", expr), f"unexpected formula {v!r}"
        expr = re.sub(r"(?<![A-Z])([A-Z]{1,2}[0-9]+)(?![0-9(])", lambda m: f"_c({m.group(1)!r})", expr)
        expr = expr.replace("^", "**").replace("<>", "!=")
        expr = re.sub(r"(?<![<>!=])=(?!=)", "==", expr)
        v = eval(expr, {"__builtins__": {}, "_c": lambda r: evaluate(ws, r, cache), **_FUNCS})  # noqa: S307
    cache[ref] = v
    return v


CASES = [
    dict(params="7B", tokens="1T", gpu="H800", days=30, mfu=0.45),
    dict(params="7B", tokens="1T", gpu="H800", days=30),
    dict(params="70B", tokens="1.4T", gpu="H800", days=60),
    dict(params="1B", tokens="20B", gpu="A100", days=3),
    dict(params="13B", tokens="chinchilla", gpu="H20", days=90, redundancy=0.0),
    dict(params="7B", tokens="1T", gpu="H800", gpus=256),
    dict(params="7B", tokens="1T", gpu="H800", budget="200万"),
    dict(params="7B", tokens="10B", gpu="H800", days=7, method="lora"),
    dict(params="1B", tokens="10B", gpu="H800", days=30),  # a sub-node job: 1/2/4 cards
    dict(params="1B", tokens="30B", gpu="H800", days=30),
]


@pytest.mark.parametrize("kw", CASES)
def test_formulas_recompute_to_the_plan(kw):
    p = kashu.plan(PlanRequest(**kw))
    data = render_xlsx(p, "en")
    wb = openpyxl.load_workbook(io.BytesIO(data))
    ws = wb.worksheets[0]
    rows = rows_for(p)
    addr = {key: f"B{i + 3}" for i, (key, *_r) in enumerate(rows)}
    cache: dict = {}
    want = plan_values(p)
    formulas = [k for k, *_r in rows if isinstance(ws[addr[k]].value, str) and str(ws[addr[k]].value).startswith("=")]
    assert len(formulas) >= 5
    for key in ("flops", "card_hours", "gpus_recommended", "days", "cost"):
        assert key in formulas, key
    for key, value in want.items():
        got = evaluate(ws, addr[key], cache)
        assert got == pytest.approx(value, rel=1e-9), (key, got, value)


def test_editing_an_input_recomputes():
    """Edit the MFU and the deadline as a finance colleague would: the outputs follow the formulas
    (the loss factors stay at the plan's values, as the sheet says)."""
    p = kashu.plan(params="70B", tokens="1.4T", gpu="H800", days=60, mfu=0.45)
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(p)))
    ws = wb.worksheets[0]
    addr = {key: f"B{i + 3}" for i, (key, *_r) in enumerate(rows_for(p))}
    ws[addr["mfu"]].value = 0.225
    ws[addr["deadline"]].value = 120
    cache: dict = {}
    assert evaluate(ws, addr["card_hours"], cache) == pytest.approx(2 * p.gpu_hours)
    k = p.extras.get("scaling_at_needed", p.scaling_efficiency) * p.extras.get("goodput_at_needed", p.goodput)
    m = p.inputs.get("schedule_margin") or 1.0
    assert evaluate(ws, addr["gpus_needed"], cache) == math.ceil(2 * p.gpu_hours * m / (120 * 24) / k - 1e-9)
    assert evaluate(ws, addr["cost"], cache) == pytest.approx(
        evaluate(ws, addr["gpus_recommended"], cache) * evaluate(ws, addr["lease_hours"], cache) * ws[addr["price"]].value)


def test_chinese_workbook_and_sheets():
    p = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30)
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(p, "zh")))
    assert wb.sheetnames == ["计划", "计算过程", "建议"]
    assert any("参数量" in str(c.value) for c in wb.worksheets[0]["A"])

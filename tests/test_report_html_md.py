"""HTML (self-contained, charts inline) and Markdown reports, and `kashu report` on the command line."""

import re
import subprocess
import sys

import pytest

import kashu
from kashu.planner import PlanRequest
from kashu.report.html import render_html
from kashu.report.markdown import render_markdown

REQ = PlanRequest(params="7B", tokens="1T", gpu="H800", days=30, mfu=0.45)


@pytest.fixture(scope="module")
def plan():
    return kashu.plan(REQ)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_html_self_contained(plan, lang):
    h = render_html(plan, lang, REQ)
    assert h.startswith("<!doctype html>")
    assert not re.search(r'<(script|link|img|iframe)[^>]+(src|href)\s*=\s*["\']?(https?:)?//', h, re.I)
    assert "<script src" not in h and '<link rel="stylesheet"' not in h
    assert "Plotly.newPlot" in h  # the drawing code is inline
    assert h.count('class="chart" data-figure=') >= 2  # days vs cards, cost vs cards
    assert ("建议集群" if lang == "zh" else "Recommended cluster") in h
    assert "6·N·D" in h


def test_html_without_request_has_no_sweep_charts(plan):
    h = render_html(plan, "en", None)
    assert 'id="fig-days_vs_cards"' not in h


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_markdown(plan, lang):
    md = render_markdown(plan, lang)
    assert md.startswith("# kashu")
    assert f"{plan.gpus_recommended:,}" in md
    assert "`6·N·D`" in md
    assert "4.2e+22" in md
    for line in md.splitlines():
        if line.startswith("|"):
            assert line.rstrip().endswith("|")


def test_markdown_escapes_table_cells():
    from kashu.report.markdown import _cell

    assert _cell("a|b<script>") == "a\\|b&lt;script&gt;"


def _kashu(*args):
    return subprocess.run([sys.executable, "-m", "kashu", *args], capture_output=True, text=True, timeout=120)


def test_report_cli_all_formats(tmp_path):
    for fmt in ("html", "md", "xlsx"):
        out = tmp_path / f"plan.{fmt}"
        r = _kashu("report", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--days", "30", "--mfu", "0.45",
                   "--format", fmt, "-o", str(out), "--lang", "zh")
        assert r.returncode == 0, r.stderr
        assert out.stat().st_size > 1000
    r = _kashu("report", "--params", "7X", "--tokens", "1T", "--days", "30", "-f", "md")
    assert r.returncode == 2 and "7X" in r.stderr
    r = _kashu("report", "--params", "7B", "--tokens", "1T", "--days", "30", "-f", "pdf")
    assert r.returncode == 2 and "format" in r.stderr

"""`kashu validate`: the performance model against published measurements."""

from __future__ import annotations

import typer

from . import LangOpt, app, emit_json


@app.command("validate")
def validate_cmd(json_out: bool = typer.Option(False, "--json", help="Print JSON."),
                 rows: bool = typer.Option(False, "--rows", help="Show every row, not only the tables."),
                 lang: str = LangOpt) -> None:
    """Compare predicted step times, throughput and memory with published runs (Korthikanti, Narayanan …)."""
    from ..i18n import detect_lang
    from ..validation import run

    res = run()
    if json_out:
        emit_json(res)
        return
    from rich.console import Console

    from ..report.perf_terminal import render_validation

    render_validation(res, Console(), detect_lang(lang), rows)

"""`kashu report --format html|md|xlsx -o FILE`: the plan as a file to forward.

It takes exactly the options of `kashu plan` — its signature is built from plan_cmd's, so an option
added there appears here too — and runs that command to get the plan.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import io
import sys
import typing
from pathlib import Path

import typer

from ..errors import KashuError
from ..i18n import detect_lang
from ..planner import Plan, PlanRequest, plan
from . import app, plan_cmd

FORMATS = {"html": "html", "md": "md", "markdown": "md", "xlsx": "xlsx", "excel": "xlsx"}


def request_from_options(options: dict[str, typing.Any]) -> PlanRequest:
    """The plan options that are PlanRequest fields (the CLI names are the field names)."""
    names = {f.name for f in dataclasses.fields(PlanRequest)}
    kw = {k: v for k, v in options.items() if k in names}
    if "quotes" in names and "quotes" not in kw:  # priced from the same book as the plan (`--db`)
        from .. import pricebook

        kw["quotes"] = pricebook.load_for_plan(options.get("db"))
    return PlanRequest(**kw)


def run_plan_command(options: dict[str, typing.Any]) -> Plan:
    """Run `kashu plan` with these options, quietly, and return its Plan."""
    with contextlib.redirect_stdout(io.StringIO()):
        p = plan_cmd.plan_cmd(**options, json_out=True)
    return p if isinstance(p, Plan) else plan(request_from_options(options))


def render(p: Plan, req: PlanRequest | None, fmt: str, lang: str) -> bytes:
    if fmt == "md":
        from ..report.markdown import render_markdown

        return render_markdown(p, lang).encode("utf-8")
    if fmt == "html":
        from ..report.html import render_html

        return render_html(p, lang, req).encode("utf-8")
    from ..report.excel import render_xlsx

    return render_xlsx(p, lang)


def report(**kwargs: typing.Any) -> None:
    fmt_raw = str(kwargs.pop("fmt") or "html").lower()
    output = kwargs.pop("output")
    fmt = FORMATS.get(fmt_raw)
    if fmt is None:
        raise KashuError(f"--format {fmt_raw!r} must be html, md or xlsx", f"--format {fmt_raw!r} 应为 html、md 或 xlsx", "format")
    kwargs["lang"] = detect_lang(kwargs.get("lang"))
    p = run_plan_command(kwargs)
    try:
        req = request_from_options(kwargs)  # for the days/cost-vs-cards sweep in the HTML report
    except (TypeError, KashuError):
        req = None
    data = render(p, req, fmt, kwargs["lang"])
    if output in (None, "-"):
        if fmt == "xlsx":
            raise KashuError("an Excel report needs a file: -o plan.xlsx", "Excel 报告需要输出文件：-o plan.xlsx", "output")
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    path = Path(output)
    if path.parent and not path.parent.exists():
        raise KashuError(f"-o {output}: the folder {path.parent} does not exist", f"-o {output}：目录 {path.parent} 不存在", "output")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    sys.stderr.write(f"kashu: wrote {path} ({fmt}, {len(data):,} bytes)\n")


def _signature() -> None:
    """report(**kwargs) gets plan's options (minus --json) plus --format and -o."""
    sig = inspect.signature(plan_cmd.plan_cmd)
    hints = typing.get_type_hints(plan_cmd.plan_cmd)
    params = [p for name, p in sig.parameters.items() if name != "json_out"]
    params += [
        inspect.Parameter("fmt", inspect.Parameter.KEYWORD_ONLY, annotation=str,
                          default=typer.Option("html", "--format", "-f", help="html (self-contained, charts inline), md or xlsx (live formulas).")),
        inspect.Parameter("output", inspect.Parameter.KEYWORD_ONLY, annotation=str,
                          default=typer.Option(None, "--output", "-o", help="File to write (html/md: stdout when omitted).")),
    ]
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    report.__signature__ = sig.replace(parameters=params, return_annotation=None)  # type: ignore[attr-defined]
    report.__annotations__ = {**{k: v for k, v in hints.items() if k not in ("json_out", "return")}, "fmt": str, "output": str}
    report.__doc__ = ("Write the plan as a report to forward: self-contained HTML with charts, Markdown, or an Excel workbook "
                      "whose input cells drive the outputs through live formulas. Takes the options of `kashu plan`.")


_signature()
app.command("report")(report)

"""The plan as one self-contained HTML file: styles, Plotly and the figures inline; nothing fetched."""

from __future__ import annotations

import json

from markupsafe import Markup

from ..planner import Plan, PlanRequest
from ..web import render as web


def _inline_script(js: str) -> Markup:
    # a script body must not close its own tag early
    return Markup(js.replace("</script", "<\\/script").replace("<!--", "<\\!--"))


def render_html(p: Plan, lang: str = "en", req: PlanRequest | None = None, charts: bool = True) -> str:
    """`req` lets the report redraw the days/cost-vs-cards curves; without it those two charts are left out."""
    ctx = web.result_context(req, p, lang, with_figures=False)
    if charts:
        from .charts import figures

        ctx["figures"] = [{"key": f.key, "title": f.title, "explain": f.explain,
                           "json": json.dumps(f.figure, ensure_ascii=False, separators=(",", ":"))}
                          for f in figures(req, p, lang)]
    plotly_js = web.plotly_js_path().read_text(encoding="utf-8") if ctx["figures"] else ""
    return web.env().get_template("report.html").render(
        lang=lang, result=ctx, css=Markup(web.static_text("app.css").replace("</style", "")),
        plotly_js=_inline_script(plotly_js), app_js=_inline_script(web.static_text("app.js")),
        gpu=p.gpu.name, plan=p.to_dict())

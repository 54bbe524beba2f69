"""The web planner: pages (planner, compare, quotes, docs) and the JSON API (`POST /api/plan`).

Everything is served from this package or from installed Python packages (plotly.min.js): no CDN.
Every plan runs in a worker thread under a time limit, so a pathological request cannot hang the server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles

from .. import pricebook
from ..errors import KashuError
from ..planner import PlanRequest, plan
from ..serial import json_default
from . import render
from .render import TARGETS, label

PLAN_SECONDS = 20.0  # a plan (with its charts) that takes longer is refused
MAX_BODY = 2_000_000  # bytes
MAX_SCENARIOS = 4
_EXEC = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kashu-plan")


class TooSlow(Exception):
    pass


async def _bounded(fn, seconds: float = PLAN_SECONDS):
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.wait_for(loop.run_in_executor(_EXEC, fn), seconds)
    except TimeoutError:
        raise TooSlow() from None


def _error_json(e: KashuError, status: int = 422) -> JSONResponse:
    return JSONResponse(status_code=status, content={
        "detail": [{"loc": ["body", e.field] if e.field else ["body"], "msg": e.message, "msg_zh": e.zh, "type": "value_error"}],
        "field": e.field, "error": e.message, "error_zh": e.zh})


def _lang(request: Request) -> str:
    q = request.query_params.get("lang")
    if q in ("en", "zh"):
        return q
    accept = request.headers.get("accept-language", "")
    return "zh" if accept.lower().startswith("zh") else "en"


def _body_schema() -> dict[str, Any]:
    """JSON schema of the API body, derived from PlanRequest (so new options are documented too)."""
    types_ = {"str": {"anyOf": [{"type": "string"}, {"type": "number"}]}, "float": {"type": "number"},
              "int": {"type": "integer"}, "bool": {"type": "boolean"}, "list": {"type": "array", "items": {"type": "string"}}}
    props = {}
    for name, spec in render.request_fields().items():
        p = dict(types_[spec.kind])
        p["title"] = label(name, "en")
        if spec.default is not None and not isinstance(spec.default, (list, dict)):
            p["default"] = spec.default
        if spec.choices:
            p["description"] = "one of: " + ", ".join(c for c in spec.choices if c)
        props[name] = p
    return {"type": "object", "properties": props, "additionalProperties": False,
            "example": {"params": "7B", "tokens": "1T", "gpu": "H800", "days": 30, "mfu": 0.45}}


def create_app(public: bool = False, token: str | None = None, db: str | None = None) -> FastAPI:
    """`public`: bound to a non-loopback address, so writes to the price book need `token` (KASHU_TOKEN).
    `db`: the price book (default $KASHU_DB, else the user data dir), read for every plan."""
    app = FastAPI(title="kashu", version="0.1", docs_url=None, redoc_url=None,
                  description="How many GPUs to rent to train an LLM. `POST /api/plan` takes the `kashu plan` options as JSON "
                              "and answers with the schema of `kashu plan --json`.")
    app.state.public = public
    app.state.db = db
    app.state.token = token if token is not None else os.environ.get("KASHU_TOKEN")
    app.mount("/static", StaticFiles(packages=[("kashu.web", "static")]), name="static")
    tpl = render.env()

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        n = request.headers.get("content-length")
        if n and n.isdigit() and int(n) > MAX_BODY:
            return PlainTextResponse("request body too large", status_code=413)
        resp = await call_next(request)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        return resp

    def page(name: str, request: Request, lang: str, **ctx) -> HTMLResponse:
        q = {k: v for k, v in request.query_params.items() if k not in ("lang", "partial")}
        other = "en" if lang == "zh" else "zh"
        ctx.update(lang=lang, other_lang=other, path=request.url.path,
                   switch_url=request.url.path + "?" + urlencode({**q, "lang": other}))
        return HTMLResponse(tpl.get_template(name).render(**ctx))

    # ------------------------------------------------------------ assets
    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    def plotly_js():
        return FileResponse(str(render.plotly_js_path()), media_type="application/javascript",
                            headers={"Cache-Control": "max-age=86400"})

    @app.get("/healthz", include_in_schema=False)
    def healthz():
        return {"ok": True}

    # ------------------------------------------------------------ planner page
    def _plan_with_figures(state: dict[str, str], lang: str, with_figures: bool = True):
        req = _with_book(render.request_from_form(state, lang), app.state.db)
        p = plan(req)  # plan() never writes into its request (tests/test_planner.py)

        return render.result_context(req, p, lang, with_figures)

    async def _result(state: dict[str, str], lang: str, with_figures: bool = True) -> tuple[dict | None, dict, str]:
        errors: dict[str, str] = {}
        general = ""
        result = None
        try:
            result = await _bounded(lambda: _plan_with_figures(state, lang, with_figures))
        except KashuError as e:
            if e.field:
                errors[e.field] = e.text(lang)
            else:
                general = e.text(lang)
        except TooSlow:
            general = (f"this plan took longer than {PLAN_SECONDS:g} s; narrow the request" if lang != "zh"
                       else f"计算超过 {PLAN_SECONDS:g} 秒；请缩小请求范围")
        return result, errors, general

    def _fields(state: dict[str, str], errors: dict[str, str], lang: str, primary: bool) -> list[dict]:
        out = []
        suffix = ""
        for name, spec in render.request_fields().items():
            if name in render.MAIN_FIELDS or name in render.HIDDEN_FIELDS:
                continue
            if (name in render.PRIMARY_FIELDS) != primary:
                continue
            if spec.kind == "bool":
                value = state.get(name + suffix, "")
            else:
                value = state.get(name + suffix, "" if spec.default is None else str(spec.default))
            out.append({"name": name, "kind": spec.kind, "value": value, "choices": spec.choices,
                        "label": label(name, lang), "help": label(name + "_help", lang) if name + "_help" in render.WEB else "",
                        "error": errors.get(name, "")})
        return out

    DEFAULTS = {"params": "7B", "tokens": "1T", "gpu": "H800", "days": "30", "target": "days"}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def planner(request: Request):
        lang = _lang(request)
        q = dict(request.query_params)
        if not any(k in q for k in ("params", "tokens", "model")):
            q = {**DEFAULTS, **q}
        state = render.form_state(q)
        result, errors, general = await _result(state, lang)
        ctx = dict(state=state, result=result, errors=errors, general=general, fields=_fields(state, errors, lang, False),
                   primary=_fields(state, errors, lang, True),
                   gpus=render.gpu_names(), presets=render.model_presets(), targets=TARGETS,
                   unknown_errors={k: v for k, v in errors.items() if k not in render.request_fields()})
        if request.query_params.get("partial"):
            return HTMLResponse(tpl.get_template("_result_block.html").render(lang=lang, **ctx))
        return page("planner.html", request, lang, **ctx)

    # ------------------------------------------------------------ compare page
    @app.get("/compare", response_class=HTMLResponse, include_in_schema=False)
    async def compare(request: Request):
        lang = _lang(request)
        q = dict(request.query_params)
        n = 2
        for i in range(MAX_SCENARIOS):
            if any(k.endswith(f"-{i}") and v for k, v in q.items()):
                n = max(n, i + 1)
        try:
            n = max(n, min(MAX_SCENARIOS, int(q.get("n", n))))
        except ValueError:
            pass
        if not any(k.endswith("-0") for k in q):
            q.update({"params-0": "7B", "tokens-0": "1T", "gpu-0": "H800", "gpus-0": "64", "target-0": "gpus",
                      "params-1": "7B", "tokens-1": "1T", "gpu-1": "H800", "gpus-1": "256", "target-1": "gpus"})
        scenarios = []
        for i in range(n):
            sub = {k[: -len(f"-{i}")]: v for k, v in q.items() if k.endswith(f"-{i}")}
            if "value" in sub:  # the form's one value box goes to whichever target is selected
                t = sub.get("target") if sub.get("target") in TARGETS else "days"
                for other in TARGETS:
                    sub.pop(other, None)
                sub[t] = sub.pop("value")
            state = render.form_state(sub)
            if not any(state.get(k) for k in ("params", "tokens")):
                state.update({"params": "7B", "tokens": "1T", "gpu": "H800"})
            result, errors, general = await _result(state, lang, with_figures=False)
            scenarios.append({"i": i, "state": state, "result": result, "errors": errors, "general": general})
        ok = [s for s in scenarios if s["result"]]
        figs = []
        if ok:
            names = [f"{label('scenario', lang)} {s['i'] + 1}" for s in ok]
            figs.append({"key": "compare_days", "title": label("days_expected", lang), "explain": "",
                         "json": json.dumps({"data": [{"type": "bar", "x": names, "y": [s["result"]["plan"]["days"] for s in ok],
                                                       "marker": {"color": "#1f77b4"}}],
                                             "layout": {"height": 280, "margin": {"l": 50, "r": 10, "t": 30, "b": 40},
                                                        "title": {"text": label("days_expected", lang)}}})})
            costs = [(s["result"]["plan"]["cost"] or {}).get("total_cny") for s in ok]
            if all(c is not None for c in costs):
                figs.append({"key": "compare_cost", "title": label("lease_cost", lang), "explain": "",
                             "json": json.dumps({"data": [{"type": "bar", "x": names, "y": costs, "marker": {"color": "#ff7f0e"}}],
                                                 "layout": {"height": 280, "margin": {"l": 70, "r": 10, "t": 30, "b": 40},
                                                            "title": {"text": label("lease_cost", lang) + " (CNY)"}}})})
        return page("compare.html", request, lang, scenarios=scenarios, n=n, gpus=render.gpu_names(), targets=TARGETS,
                    figures=figs, max_scenarios=MAX_SCENARIOS)

    # ------------------------------------------------------------ quotes page (the price book, issue 5)
    def _may_write(request: Request, given: str) -> str | None:
        """None when a write is allowed; else the reason (a public server needs KASHU_TOKEN)."""
        if not request.app.state.public:
            return None
        tok = request.app.state.token
        if not tok:
            return "this server listens on a public address: set KASHU_TOKEN to allow writes to the price book"
        given = given or request.headers.get("x-kashu-token", "")
        if not hmac.compare_digest(str(given).encode(), str(tok).encode()):
            return "a valid token (KASHU_TOKEN) is needed to change the price book"
        return None

    def _quotes_page(request: Request, lang: str, error: str = "", message: str = "", form: dict | None = None,
                     field: str = "", status: int = 200) -> HTMLResponse:
        rows: list[dict] = []
        if not error:
            try:
                rows = [q.to_dict() for q in pricebook.load_for_plan(app.state.db)][:2000]
            except KashuError as e:
                error = e.text(lang)
        resp = page("quotes.html", request, lang, rows=rows, error=error, message=message,
                    need_token=bool(app.state.public), form=form or {}, field=field,
                    columns=list(pricebook.COLUMNS), choices=_quote_choices())
        resp.status_code = status
        return resp

    @app.get("/quotes", response_class=HTMLResponse, include_in_schema=False)
    async def quotes(request: Request):
        return _quotes_page(request, _lang(request))

    @app.post("/quotes", response_class=HTMLResponse, include_in_schema=False)
    async def quotes_write(request: Request):
        lang = _lang(request)
        form = await request.form()
        text_fields = {k: str(v)[:500] for k, v in form.items() if isinstance(v, str)}
        why = _may_write(request, text_fields.get("token", ""))
        if why is not None:
            return _quotes_page(request, lang, error=why, form=text_fields, status=403)
        action = text_fields.get("action", "add")
        try:
            if action == "import":
                upload = form.get("csv")
                content = text_fields.get("csv_text", "")
                if upload is not None and hasattr(upload, "read"):
                    raw = await upload.read(MAX_BODY + 1)
                    if len(raw) > MAX_BODY:
                        raise KashuError("the CSV file is too large", "CSV 文件过大", "csv")
                    content = raw.decode("utf-8-sig", errors="replace") or content
                n = await _bounded(lambda: pricebook.import_csv(pricebook.open_book(app.state.db), content))
                msg = f"imported {n} quotes" if lang != "zh" else f"已导入 {n} 条报价"
            elif action == "remove":
                ids = [int(x) for x in text_fields.get("id", "").replace(",", " ").split() if x.isdigit()]
                n = await _bounded(lambda: pricebook.remove(pricebook.open_book(app.state.db), ids))
                msg = f"removed {n}" if lang != "zh" else f"已删除 {n} 条"
            else:
                raw = {k: text_fields.get(k, "") for k in pricebook.COLUMNS}
                if not raw.get("quoted_on"):
                    import datetime as dt

                    raw["quoted_on"] = dt.date.today().isoformat()
                q = pricebook.make_quote(raw)
                await _bounded(lambda: pricebook.add(pricebook.open_book(app.state.db), [q]))
                msg = (f"added: {q.vendor} {q.gpu} ×{q.cards} {q.mode} {q.price} {q.currency}/{q.unit}" if lang != "zh"
                       else f"已添加：{q.vendor} {q.gpu} ×{q.cards} {q.mode} {q.price} {q.currency}/{q.unit}")
        except KashuError as e:
            return _quotes_page(request, lang, error=e.text(lang), form=text_fields, field=e.field or "", status=422)
        except TooSlow:
            return _quotes_page(request, lang, error="the price book did not answer in time", form=text_fields, status=503)
        return _quotes_page(request, lang, message=msg)

    # ------------------------------------------------------------ API
    @app.post("/api/plan", summary="Plan a training run",
              description="Fields are the `kashu plan` option names (derived from the planner's request type); "
                          "the answer has the schema of `kashu plan --json`. Bad input: 422 with `field` and `error`.",
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": _body_schema()}}}},
              responses={422: {"description": "an input the user can fix: `field` names it, `error` says why"}})
    async def api_plan(request: Request):
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            return _error_json(KashuError("the body is not valid JSON", "请求体不是合法 JSON", None))
        if not isinstance(body, dict):
            return _error_json(KashuError("the body must be a JSON object of plan options", "请求体应为 JSON 对象", None))
        try:
            p = await _bounded(lambda: plan(_with_book(_coerce_json(body), app.state.db)))
        except KashuError as e:
            return _error_json(e)
        except TooSlow:
            return JSONResponse(status_code=503, content={"error": f"the plan took longer than {PLAN_SECONDS:g} s", "field": None})
        return JSONResponse(json.loads(json.dumps(p.to_dict(), default=json_default)))

    @app.post("/api/compare", summary="Plan two to four scenarios",
              description='Body: `{"scenarios": [{plan options}, ...]}` (at most 4); answer: `{"scenarios": [plan, ...]}`.')
    async def api_compare(request: Request):
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            return _error_json(KashuError("the body is not valid JSON", "请求体不是合法 JSON", None))
        sc = body.get("scenarios") if isinstance(body, dict) else None
        if not isinstance(sc, list) or not 1 <= len(sc) <= MAX_SCENARIOS or not all(isinstance(s, dict) for s in sc):
            return _error_json(KashuError(f"scenarios: a list of 1 to {MAX_SCENARIOS} objects",
                                          f"scenarios：1 到 {MAX_SCENARIOS} 个对象的列表", "scenarios"))
        try:
            plans = await _bounded(lambda: [plan(_with_book(_coerce_json(s), app.state.db)).to_dict() for s in sc])
        except KashuError as e:
            return _error_json(e)
        except TooSlow:
            return JSONResponse(status_code=503, content={"error": "too slow", "field": None})
        return JSONResponse(json.loads(json.dumps({"scenarios": plans}, default=json_default)))

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def docs(request: Request):
        lang = _lang(request)
        return page("docs.html", request, lang, schema=app.openapi(),
                    example=json.dumps(_body_schema()["example"]))

    return app


def _coerce_json(body: dict[str, Any]) -> PlanRequest:
    specs = render.request_fields()
    out: dict[str, Any] = {}
    for k, v in body.items():
        spec = specs.get(k)
        if spec is not None and spec.kind in ("float", "int", "bool") and isinstance(v, str):
            v = render._convert(spec, v)
        elif spec is not None and spec.kind in ("float", "int") and (isinstance(v, bool) or not isinstance(v, (int, float, type(None)))):
            raise KashuError(f"{k} {v!r} is not a number", f"{k} {v!r} 不是数字", k)
        elif spec is not None and spec.kind == "str" and isinstance(v, bool):
            raise KashuError(f"{k} {v!r}: expected text or a number", f"{k} {v!r}：应为文本或数字", k)
        out[k] = v
    return render.request_from_json(out)


# ------------------------------------------------------------ price book (issue 5), when it exists

def _quote_choices() -> dict[str, list[str]]:
    return {"mode": list(pricebook.MODES), "unit": list(pricebook.UNITS), "deployment": list(pricebook.DEPLOYMENTS),
            "currency": list(pricebook.CURRENCIES), "gpu": render.gpu_names()}


def _with_book(req: PlanRequest, db: str | None) -> PlanRequest:
    """The server's price book prices the plan, as `kashu plan` does with its --db."""
    if req.quotes is not None:
        return req
    return dataclasses.replace(req, quotes=pricebook.load_for_plan(db))


app = create_app()  # `uvicorn kashu.web.app:app`

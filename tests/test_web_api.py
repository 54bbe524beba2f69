"""The JSON API and the server-rendered pages, through FastAPI's TestClient (no browser)."""

import dataclasses
import html
import re

import pytest
from fastapi.testclient import TestClient

from kashu.planner import PlanRequest
from kashu.web.app import create_app
from kashu.web.render import request_fields

BASE = {"params": "7B", "tokens": "1T", "gpu": "H800", "days": 30, "mfu": 0.45}
XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def test_api_plan_matches_cli_schema(client):
    r = client.post("/api/plan", json=BASE)
    assert r.status_code == 200
    d = r.json()
    assert abs(d["total_flops"] / 4.2e22 - 1) < 1e-9
    import kashu

    want = kashu.plan(PlanRequest(**BASE)).to_dict()
    assert set(d) == set(want)
    assert d["gpus_recommended"] == want["gpus_recommended"]
    assert d["inputs"]["mfu"] == 0.45


def test_api_accepts_every_planrequest_field(client):
    """The body's fields are PlanRequest's, so options other engineers add appear without editing the app."""
    from kashu.web.render import INTERNAL_FIELDS

    assert set(request_fields()) == {f.name for f in dataclasses.fields(PlanRequest)} - set(INTERNAL_FIELDS)
    props = client.get("/openapi.json").json()["paths"]["/api/plan"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert set(props) == set(request_fields())


@pytest.mark.parametrize("body,field", [
    ({**BASE, "params": "7X"}, "params"),
    ({**BASE, "tokens": "lots"}, "tokens"),
    ({**BASE, "gpu": "H9000"}, "gpu"),
    ({**BASE, "mfu": "fast"}, "mfu"),
    ({**BASE, "mfu": 3}, "mfu"),
    ({**BASE, "unknown_option": 1}, "unknown_option"),
    ({**BASE, "gpus": 64}, "gpus"),  # days and gpus contradict
    ({**BASE, "params": "x" * 500}, "params"),
])
def test_api_422_names_the_field(client, body, field):
    r = client.post("/api/plan", json=body)
    assert r.status_code == 422, r.text
    d = r.json()
    assert d["field"] == field
    assert d["error"] and d["detail"][0]["loc"] == ["body", field]


@pytest.mark.parametrize("body", [
    {"params": "1e40", "tokens": "1T", "gpu": "H800", "gpus": 10**9},
    {"params": "7B", "tokens": "1T", "gpu": "H800", "gpus": 10**9},
    {"params": "7B", "tokens": "1e30", "gpu": "H800", "days": 30},
    {"params": "7B", "tokens": "1T", "gpu": "H800", "days": "1e9"},
    {"params": "7B", "tokens": "1T", "gpu": "H800", "budget": "1e30"},
    {"params": 1e308, "tokens": "1T", "gpu": "H800", "days": 30},
    {"params": "7B", "tokens": "1T", "gpu": "H800", "days": 30, "lora_rank": 10**12, "method": "lora"},
    [1, 2, 3],
])
def test_api_bounds_refused_not_500(client, body):
    r = client.post("/api/plan", json=body)
    assert r.status_code in (200, 422), r.text


def test_api_bad_json(client):
    r = client.post("/api/plan", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422


def test_api_compare(client):
    r = client.post("/api/compare", json={"scenarios": [{**BASE, "days": None, "gpus": 64}, {**BASE, "days": None, "gpus": 256}]})
    assert r.status_code == 200
    a, b = r.json()["scenarios"]
    assert a["days"] > b["days"]
    assert client.post("/api/compare", json={"scenarios": [BASE] * 5}).status_code == 422


def test_planner_page_default_plan(client):
    r = client.get("/")
    assert r.status_code == 200
    assert 'id="plan-form"' in r.text and 'id="sum-gpus_recommended"' in r.text
    assert "data-figure" in r.text  # days vs cards, cost vs cards
    assert 'src="/vendor/plotly.min.js"' in r.text


def test_planner_page_prefill_and_lang(client):
    r = client.get("/?params=13B&tokens=2T&gpu=A100&gpus=128&lang=zh")
    assert r.status_code == 200
    assert 'value="13B"' in r.text and 'value="128"' in r.text
    assert "建议集群" in r.text
    # the language switch keeps the inputs
    m = re.search(r'id="lang-switch"[^>]*href="([^"]+)"|href="([^"]+)"[^>]*id="lang-switch"', r.text)
    href = html.unescape(next(g for g in m.groups() if g))
    assert "params=13B" in href and "gpus=128" in href and "lang=en" in href


def test_planner_inline_field_error(client):
    r = client.get("/?params=7X&tokens=1T&gpu=H800&days=30")
    assert r.status_code == 200
    m = re.search(r'<span class="err" id="err-params"[^>]*>([^<]+)</span>', r.text)
    assert m and "7X" in html.unescape(m.group(1))
    r = client.get("/?params=7B&tokens=1T&gpu=H800&days=30&mfu=abc")
    assert re.search(r'id="err-mfu"[^>]*>[^<]*abc', r.text)


def test_every_text_field_escaped(client):
    names = [n for n, s in request_fields().items() if n != "lang"] + ["target", "chinchilla", "lang"]
    for name in names:
        for path in ("/", "/compare", "/?partial=1"):
            q = {"params": "7B", "tokens": "1T", "gpu": "H800", "days": "30", name: XSS}
            if path == "/compare":
                q = {f"{k}-0": v for k, v in q.items()}
            r = client.get(path.split("?")[0], params={**q, **({"partial": "1"} if "partial" in path else {})})
            assert r.status_code == 200, (name, path, r.status_code)
            assert XSS not in r.text, (name, path)
            assert "<script>alert" not in r.text
    r = client.post("/api/plan", json={**BASE, "gpu": XSS})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/json")


def test_compare_page(client):
    r = client.get("/compare?params-0=7B&tokens-0=1T&gpu-0=H800&gpus-0=64&params-1=7B&tokens-1=1T&gpu-1=H800&gpus-1=256"
                   "&params-2=7B&tokens-2=1T&gpu-2=A100&gpus-2=256")
    assert r.status_code == 200
    assert r.text.count('class="form scenario"') == 3
    assert 'id="compare-table"' in r.text


def test_quotes_page_and_docs_offline(client):
    r = client.get("/quotes")
    assert r.status_code == 200
    d = client.get("/docs")
    assert d.status_code == 200 and "/api/plan" in d.text
    assert not re.search(r'(src|href)="https?://', d.text)
    assert client.get("/openapi.json").status_code == 200


def test_pages_reference_no_remote_assets(client):
    for path in ("/", "/compare", "/quotes", "/docs"):
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', client.get(path).text), path
    assert client.get("/vendor/plotly.min.js").status_code == 200
    assert client.get("/static/app.js").status_code == 200


def test_body_too_large(client):
    r = client.post("/api/plan", content=b"{" + b" " * 3_000_000 + b"}", headers={"Content-Type": "application/json"})
    assert r.status_code == 413


CSV_HEAD = "vendor,gpu,cards,mode,price,currency,unit,site,deployment,includes,quoted_on,valid_until,notes\n"


def test_quotes_page_add_import_and_price_a_plan(tmp_path):
    pytest.importorskip("kashu.pricebook")
    c = TestClient(create_app(db=str(tmp_path / "book.db")))
    r = c.post("/quotes", data={"action": "add", "vendor": "Acme<script>", "gpu": "H800", "cards": "512", "mode": "monthly",
                                "price": "9.5", "currency": "CNY", "unit": "card-hour", "deployment": "bare-metal",
                                "quoted_on": "2026-11-01"})
    assert r.status_code == 200, r.text
    assert "Acme&lt;script&gt;" in r.text and "Acme<script>" not in r.text
    r = c.post("/quotes", data={"action": "import", "csv_text": CSV_HEAD + "Bad,H800,8,monthly,-1,CNY,card-hour,,bare-metal,,2026-11-01,,\n"})
    assert r.status_code == 422 and "error-box" in r.text
    r = c.post("/quotes", data={"action": "import", "csv_text": CSV_HEAD + "Beta,A100,64,daily,7,CNY,card-hour,Daxing,remote-cloud,,2026-11-01,,\n"})
    assert r.status_code == 200 and "Beta" in r.text
    r = c.post("/quotes", data={"action": "add", "vendor": "x", "gpu": "H800", "cards": "8", "mode": "monthly", "price": "abc"})
    assert r.status_code == 422 and 'id="qerr-price"' in r.text
    d = c.post("/api/plan", json={**BASE}).json()
    assert "Acme" in d["cost"]["source"]


def test_quotes_writes_need_token_on_public_server(tmp_path):
    pytest.importorskip("kashu.pricebook")
    c = TestClient(create_app(public=True, token="s3cret", db=str(tmp_path / "b.db")))
    q = {"action": "add", "vendor": "V", "gpu": "H800", "cards": "8", "mode": "monthly", "price": "9", "quoted_on": "2026-11-01"}
    assert c.post("/quotes", data=q).status_code == 403
    assert c.post("/quotes", data={**q, "token": "wrong"}).status_code == 403
    assert c.post("/quotes", data={**q, "token": "s3cret"}).status_code == 200
    c2 = TestClient(create_app(public=True, token="", db=str(tmp_path / "c.db")))
    assert c2.post("/quotes", data={**q, "token": ""}).status_code == 403


def test_compare_value_box_follows_the_target(client):
    r = client.get("/compare?params-0=7B&tokens-0=1T&gpu-0=H800&target-0=days&value-0=30"
                   "&params-1=7B&tokens-1=1T&gpu-1=H800&target-1=budget&value-1=100万")
    assert r.status_code == 200
    assert r.text.count('class="err"></span>') >= 2 and 'id="compare-table"' in r.text
    assert "Scenario 2</th>" in r.text

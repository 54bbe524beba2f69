"""End to end in a real browser: `kashu serve` + Debian's Chromium headless, driven by Playwright."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import kashu  # noqa: E402
from webtools import CHROMIUM, kashu_server, launch  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is not installed (make test installs it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    with kashu_server({"KASHU_DB": str(tmp_path_factory.mktemp("db") / "k.db")}) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1300, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(20000)
    pg.on("dialog", lambda d: pytest.fail(f"a dialog opened: {d.message}"))
    yield pg
    ctx.close()


def _rec(pg) -> str:
    return pg.inner_text("#sum-gpus_recommended .v")


def test_default_plan_with_charts(page, base):
    page.goto(base + "/")
    page.wait_for_selector(".chart[data-rendered='1'] .main-svg")
    want = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30)
    assert _rec(page).startswith(f"{want.gpus_recommended:,}")
    assert page.locator(".chart[data-rendered='1']").count() >= 2
    assert page.locator("#fig-days_vs_cards .main-svg").count() >= 1
    assert page.locator("#steps tbody tr").count() == len(want.steps)


def test_fill_form_and_read_result(page, base):
    page.goto(base + "/")
    page.wait_for_selector(".chart[data-rendered='1']")
    want = kashu.plan(params="70B", tokens="1.4T", gpu="H800", days=60, mfu=0.45)
    page.fill("#f-params", "70B")
    page.fill("#f-tokens", "1.4T")
    page.fill("#f-days", "60")
    page.fill("#f-mfu", "0.45")
    page.wait_for_function("want => document.querySelector('#sum-gpus_recommended .v').textContent.startsWith(want)",
                           arg=f"{want.gpus_recommended:,}")
    page.wait_for_selector("#fig-days_vs_cards .chart[data-rendered='1']")
    assert "params=70B" in page.url and "mfu=0.45" in page.url
    # a card count instead of a deadline: typing selects the mode
    page.fill("#f-gpus", "512")
    w2 = kashu.plan(params="70B", tokens="1.4T", gpu="H800", gpus=512, mfu=0.45)
    page.wait_for_function("want => document.querySelector('#sum-days .v').textContent === want",
                           arg=kashu.quantities.format_days(w2.days))
    assert page.is_checked("input[name=target][value=gpus]")


def test_inline_error_next_to_field(page, base):
    page.goto(base + "/")
    page.fill("#f-params", "7X")
    page.wait_for_function("document.querySelector('#err-params').textContent.includes('7X')")
    assert page.locator(".error-box").count() >= 1
    page.fill("#f-params", "7B")
    page.wait_for_function("document.querySelector('#err-params').textContent === ''")


def test_switch_language_keeps_inputs(page, base):
    page.goto(base + "/?lang=en")
    page.fill("#f-params", "13B")
    page.fill("#f-days", "45")
    page.wait_for_function("location.search.includes('params=13B') && location.search.includes('days=45')")
    page.wait_for_function("document.getElementById('lang-switch').href.includes('params=13B')")
    page.click("#lang-switch")
    page.wait_for_load_state()
    page.wait_for_selector(".chart[data-rendered='1']")
    assert page.input_value("#f-params") == "13B"
    assert page.input_value("#f-days") == "45"
    assert page.get_attribute("html", "lang") == "zh-CN"
    assert "建议集群" in page.inner_text("#sum-gpus_recommended")
    page.click("#lang-switch")
    page.wait_for_load_state()
    assert page.input_value("#f-params") == "13B"
    assert "Recommended" in page.inner_text("#sum-gpus_recommended")


def test_script_in_fields_is_not_run(page, base):
    x = "<script>window.__xss=1</script><img src=x onerror=window.__xss=2>"
    page.goto(base + "/?" + "&".join(f"{k}={x}" for k in ("params", "tokens", "gpu", "days", "mfu", "lease", "method")))
    page.goto(base + "/?params=7B&tokens=1T&days=30&gpu=" + x)
    assert page.evaluate("window.__xss") is None
    short = "<img src=x onerror=window.__xss=2>"
    page.fill("#f-gpu", short)
    page.wait_for_function("document.querySelector('#err-gpu').textContent.includes('onerror')")
    assert page.evaluate("window.__xss") is None
    assert short in page.inner_text("#err-gpu")  # shown as text, not run


def test_compare_page(page, base):
    page.goto(base + "/compare")
    page.wait_for_selector("#compare-table")
    page.wait_for_selector(".chart[data-rendered='1']")
    assert page.locator("#compare-table thead th").count() == 3
    page.click("button[name=n]")
    page.wait_for_load_state()
    assert page.locator(".scenario").count() == 3

"""Screenshots of the planner page for the README: docs/web-en.png and docs/web-zh.png.

Runs `kashu serve` and Debian's Chromium (headless, Playwright). Usage: .venv/bin/python scripts/screenshots.py
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests"))
from playwright.sync_api import sync_playwright  # noqa: E402

from webtools import kashu_server, launch  # noqa: E402

out = os.path.join(here, "..", "docs")
os.makedirs(out, exist_ok=True)
with kashu_server() as base, sync_playwright() as pw:
    b = launch(pw)
    for lang in ("en", "zh"):
        pg = b.new_page(viewport={"width": 1360, "height": 1020})
        pg.goto(f"{base}/?params=7B&tokens=1T&gpu=H800&days=30&mfu=0.45&lang={lang}")
        pg.wait_for_selector(".chart[data-rendered='1'] .main-svg")
        pg.wait_for_timeout(300)
        path = os.path.join(out, f"web-{lang}.png")
        pg.screenshot(path=path)
        print("wrote", os.path.relpath(path))
        pg.close()
    b.close()

"""The built site in headless Chromium: math rendered, figures present, language switch,
Chinese search, and no request leaving 127.0.0.1.

Needs Debian's chromium at /usr/bin/chromium (Playwright drives it; `playwright install` is
not used). Without it these tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from sitecheck import pages

pytestmark = [pytest.mark.site, pytest.mark.browser]

CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]


def _need_chromium():
    if Path(CHROMIUM).exists() or shutil.which(CHROMIUM):
        return
    msg = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + " -- required under CI=true")
    pytest.skip(msg)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(built_site):
    assert built_site.returncode == 0, built_site.log[-2000:]
    handler = functools.partial(_Quiet, directory=str(built_site.path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    _need_chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context()
    pg = context.new_page()
    pg.requests = []
    pg.on("request", lambda req: pg.requests.append(req.url))
    pg.console_errors = []
    pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    yield pg
    context.close()


def _url(server, lang, page):
    stem = page[:-3]
    path = "" if stem == "index" else f"{stem}/"
    return f"{server}/{'zh/' if lang == 'zh' else ''}{path}"


WAIT_FOR_MATHJAX = """
async () => {
  if (!document.querySelector('.arithmatex')) return 'no-math';
  for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 50));
  await MathJax.startup.promise;
  return 'typeset';
}
"""

MATH_REPORT = """
() => {
  const spans = [...document.querySelectorAll('.arithmatex')];
  return {
    total: spans.length,
    rendered: spans.filter(s => s.querySelector('mjx-container')).length,
    errors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
    raw: spans.filter(s => !s.querySelector('mjx-container') && /\\\\\\(|\\\\\\[/.test(s.textContent)).length,
  };
}
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", pages("en"))
def test_page_renders_math_and_figures_locally(page, server, lang, name):
    response = page.goto(_url(server, lang, name), wait_until="load")
    assert response is not None and response.ok
    assert page.evaluate(WAIT_FOR_MATHJAX) in ("typeset", "no-math")
    report = page.evaluate(MATH_REPORT)
    assert report["rendered"] == report["total"], report
    assert report["errors"] == 0 and report["raw"] == 0, report
    sizes = page.evaluate(
        "() => [...document.querySelectorAll('.posenc-figure svg')].map(s => s.getBoundingClientRect().width)"
    )
    assert all(w > 50 for w in sizes), sizes
    assert page.evaluate("() => document.documentElement.lang") == ("zh" if lang == "zh" else "en")
    page.wait_for_load_state("networkidle")
    foreign = [u for u in page.requests if not u.startswith(server) and not u.startswith("data:")]
    assert not foreign, foreign


@pytest.mark.parametrize("src,dst", [("en", "zh"), ("zh", "en")])
def test_language_switch_lands_on_the_twin(page, server, src, dst):
    name = "sinusoidal.md"
    page.goto(_url(server, src, name))
    page.hover(".md-header .md-select")
    page.click(f'.md-select__link[hreflang="{dst}"]')
    page.wait_for_load_state("load")
    assert page.url == _url(server, dst, name)
    assert page.evaluate("() => document.documentElement.lang") == dst


def test_chinese_search_finds_the_chinese_page(page, server):
    page.goto(_url(server, "zh", "sinusoidal.md"))
    page.click("input.md-search__input")
    page.keyboard.type("位置编码")  # inserted as text, as an IME commits it...
    page.keyboard.press("End")  # ...and the search runs on the key-up that follows
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    links = page.eval_on_selector_all(".md-search-result__link", "els => els.map(e => e.href)")
    assert links and all("/zh/" in href for href in links), links

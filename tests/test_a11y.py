"""Accessibility of the built site: axe-core over every page, both languages, light and dark.

axe-core comes from npm (node_modules/axe-core, pinned in package.json); it is injected into
each page with Playwright (the site itself never loads it) and a page fails on any violation,
naming the rule and the elements. The run itself is part of the one pass per page of
tests/test_browser_phone.py::check_page, in four shards (issue 23: a page was loaded twice, once for
the phone checks and once for axe): every page is checked in the light scheme with every rule;
the pages of ``DARK_PAGES`` (every kind of element the site has, both languages) are then
switched to the dark scheme (what Material's toggle does) and checked again with the colour
rules. This file holds the script that runs axe, those pages, the check that the pages checked
are all the built pages, and the first-view byte budget.

The first view of the heaviest pages is held to a byte budget: at a phone's viewport, served
gzip-compressed as a static host would, a page may transfer at most 450 KiB.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sitecheck import LANGS, pages

pytestmark = [pytest.mark.site, pytest.mark.browser]

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
FIRST_VIEW_BUDGET = 450 * 1024  # bytes on the wire, issue 13

COLOUR_RULES = ["color-contrast", "link-in-text-block"]
RUN_AXE = """
async ([scheme, COLOUR_RULES]) => {
  if (!document.getElementById('no-transitions')) {  // colours are read mid-transition otherwise
    const style = document.createElement('style');
    style.id = 'no-transitions';
    style.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';
    document.head.append(style);
  }
  document.body.setAttribute('data-md-color-scheme', scheme);
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  // the dark pass only re-runs the rules whose outcome depends on colours
  const options = scheme === 'default' ? {} : {runOnly: {type: 'rule', values: COLOUR_RULES}};
  const result = await axe.run(document, {resultTypes: ['violations'], ...options});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 200)),
  }));
}
"""


def _need(path: str, what: str) -> None:
    if Path(path).exists() or shutil.which(path):
        return
    msg = f"{what} not found at {path}"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + " -- required under CI=true")
    pytest.skip(msg)


def site_pages(site: Path) -> list[str]:
    """URL paths of every built page, both languages (404 pages excluded)."""
    out = []
    for html in sorted(site.rglob("index.html")):
        rel = html.parent.relative_to(site).as_posix()
        if rel.startswith(("assets", "search")) or rel.endswith("/search"):
            continue
        out.append("/" if rel == "." else f"/{rel}/")
    return out


@pytest.fixture(scope="module")
def served(built_site):
    assert built_site.returncode == 0, built_site.log[-2000:]
    import sys

    sys.path.insert(0, str(ROOT))
    from bench.site_server import serve

    with serve(built_site.path) as base:
        yield base, site_pages(built_site.path)


@pytest.fixture(scope="module")
def tab():
    _need(CHROMIUM, "Chromium (apt-get install chromium)")
    _need(str(AXE), "axe-core (npm ci)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("playwright is not installed -- required under CI=true")
        pytest.skip("playwright is not installed")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 412, "height": 823}, is_mobile=True)
        yield context.new_page()
        browser.close()


def _url_path(lang: str, page: str) -> str:
    stem = page[:-3]
    prefix = "" if lang == "en" else f"{lang}/"
    return f"/{prefix}" if stem == "index" else f"/{prefix}{stem}/"


def test_axe_covers_every_built_page(served):
    """The axe run (tests/test_browser_phone.py::test_page_on_a_phone) names its pages from docs/; the
    built site has no others."""
    _, paths = served
    expected = {_url_path(lang, page) for lang in LANGS for page in pages("en")}
    assert len(paths) >= 40 and set(paths) == expected, sorted(set(paths) ^ expected)


# Every page is checked with axe-core in the light scheme (every rule) in
# tests/test_browser_phone.py::test_page_on_a_phone: one load per page for the phone checks and axe
# together (issue 23). The dark pass re-runs only the colour rules, and colours come from one
# stylesheet: it runs on the pages that together hold every kind of element the site has
# (admonitions, tables, figures, math, API signatures, code, search, the comparison table's
# links), in both languages. (On every page it would cost about 40 % more axe time.)
DARK_PAGES = {
    "index.md",
    "api.md",
    "api-encodings.md",
    "api-modules.md",
    "atlas.md",
    "comparison.md",
    "conventions.md",
    "errata.md",
    "faq.md",
    "glossary.md",
    "learned.md",
    "performance.md",
    "rope-2d.md",
    "sinusoidal.md",
    "worked-example.md",
}


def _wire_bytes(request) -> int:  # type: ignore[no-untyped-def]
    """Bytes of one finished request on the wire: headers + compressed body. Chromium reports a
    0-byte body for a worker's own script; its Content-Length (the gzipped size) counts then."""
    sizes = request.sizes()
    body = sizes["responseBodySize"]
    if not body:
        response = request.response()
        body = int(response.headers.get("content-length", 0)) if response else 0
    return body + sizes["responseHeadersSize"]


def test_first_view_of_the_heaviest_pages_fits_the_budget(served, tab, built_site):
    """The four pages with the most gzipped HTML (where the math and figures are), opened with an
    empty cache at a phone's viewport and not touched: everything the page and its workers load
    up to network idle, on the wire. The search index and Material's search engine are not part
    of it: they load when the reader starts searching (docs/assets/posenc-search.js); the page
    loads only the index's stub (its settings, no documents)."""
    import gzip

    base, paths = served

    def html_gz(path: str) -> int:
        return len(
            gzip.compress((built_site.path / path.strip("/") / "index.html").read_bytes(), 6)
        )

    heaviest = sorted(paths, key=html_gz)[-4:]
    weights = {}
    for path in heaviest:
        context = tab.context.browser.new_context(
            viewport={"width": 412, "height": 823}, is_mobile=True
        )
        page = context.new_page()
        sent: list = []

        def record(request, sent=sent):  # a Python function: Playwright tags its handlers
            sent.append(request)

        context.on("requestfinished", record)  # the context's: workers' requests count too
        page.goto(base + path, wait_until="load")
        page.wait_for_load_state("networkidle")
        urls = [r.url.split("?")[0] for r in sent]
        weights[path] = sum(_wire_bytes(r) for r in sent)
        context.close()
        assert base + path in urls, (path, urls)  # the page itself
        assert base + "/assets/posenc-search.js" in urls, urls  # the search worker did start...
        searching = [u for u in urls if "full_index" in u or "/workers/search." in u]
        assert not searching, searching  # ...but loads neither the index nor the search engine
    assert min(weights.values()) > 50 * 1024, weights  # the counting works at all
    worst = max(weights, key=weights.__getitem__)
    assert weights[worst] <= FIRST_VIEW_BUDGET, (worst, weights[worst] // 1024, "KiB")

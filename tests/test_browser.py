"""The built site in headless Chromium, as a reader meets it: on a phone (390 px) and a desktop
(1280 px), in both languages. Math shown without raw TeX, figures present, nothing wider than the
screen, no console error, no request leaving 127.0.0.1; tables inside the text column; the copy
button copies code without prompts; the language switch keeps the page and the section; each
language searches its own pages, loading its index only when the reader starts searching, and
Chinese queries search and highlight words.

Needs Debian's chromium at /usr/bin/chromium (Playwright drives it; `playwright install` is
not used). Without it these tests skip, except under CI=true, where they fail.
(Every page on a phone, with axe-core, is in tests/test_browser_phone.py.)
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from ci_rule import require
from sitecheck import DOCS, api_pages, import_hook, pages

pytestmark = [pytest.mark.site, pytest.mark.browser]

CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


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


def serving(built_site):
    """The built site over HTTP on 127.0.0.1 (a generator: the base URL, then shut down)."""
    assert built_site.returncode == 0, built_site.log[-2000:]
    handler = functools.partial(_Quiet, directory=str(built_site.path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def chromium():
    """Debian's Chromium driven by Playwright (a generator: the browser, then closed)."""
    _need_chromium()
    sync_api = require("playwright.sync_api")  # skip without it; fail under CI=true
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _open(browser, viewport=DESKTOP, **kwargs):
    context = browser.new_context(viewport=viewport, **kwargs)
    pg = context.new_page()
    pg.requests = []
    pg.on("request", lambda req: pg.requests.append(req.url))
    pg.console_errors = []
    pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    pg.on("pageerror", lambda err: pg.console_errors.append(f"uncaught: {err}"))
    pg.on("requestfailed", lambda req: pg.console_errors.append(f"failed: {req.url}"))
    return context, pg


@pytest.fixture
def page(browser, server):
    context, pg = _open(browser)
    yield pg
    context.close()


@pytest.fixture
def phone(browser, server):
    context, pg = _open(browser, PHONE, is_mobile=True, has_touch=True)
    yield pg
    context.close()


def _url(server, lang, page):
    stem = page[:-3]
    path = "" if stem == "index" else f"{stem}/"
    return f"{server}/{'zh/' if lang == 'zh' else ''}{path}"


# Renderer-agnostic: a formula shows as typeset output (KaTeX or MathJax), never as raw TeX.
MATH_REPORT = r"""
() => {
  const spans = [...document.querySelectorAll('.arithmatex')];
  const typeset = s => s.querySelector('.katex, mjx-container, math');
  return {
    total: spans.length,
    raw: spans.filter(s => !typeset(s)).map(s => s.textContent.slice(0, 60)),
    errors: document.querySelectorAll('.katex-error, mjx-merror, [data-mjx-error]').length,
  };
}
"""

# Everything that sticks out to the right of the screen, widest first (for the failure message).
OVERFLOW = """
() => {
  const limit = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > limit + 1) {
      let clipped = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const s = getComputedStyle(p);
        if (s.overflowX !== 'visible' && p.getBoundingClientRect().right <= limit + 1) { clipped = true; break; }
        if (getComputedStyle(p).position === 'fixed') { clipped = true; break; }
      }
      if (!clipped) wide.push([Math.round(r.right), el.tagName.toLowerCase() + '.' + el.className]);
    }
  }
  wide.sort((a, b) => b[0] - a[0]);
  return {scroll: document.documentElement.scrollWidth, width: limit, wide: wide.slice(0, 5)};
}
"""


TABLE_BOXES = """
() => {
  const column = document.querySelector('article.md-content__inner');
  const c = column.getBoundingClientRect();
  const pad = parseFloat(getComputedStyle(column).paddingLeft);
  return [...column.querySelectorAll('table')].map(t => {
    // the box that holds the table: Material's scroll wrapper (or the table itself)
    const box = t.closest('.md-typeset__scrollwrap') || t;
    const r = box.getBoundingClientRect();
    return {left: r.left - (c.left + pad), right: (c.right - pad) - r.right,
            scrolls: t.scrollWidth > box.clientWidth + 1, overflow: getComputedStyle(box).overflowX};
  });
}
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["comparison.md", "errata.md", "conventions.md", *api_pages()])
def test_tables_stay_in_the_text_column(page, server, lang, name):
    """At 1280 px a table is no wider than the text column; what does not fit scrolls in the
    table's own box."""
    page.goto(_url(server, lang, name), wait_until="load")
    boxes = page.evaluate(TABLE_BOXES)
    assert boxes
    for box in boxes:
        assert box["left"] >= -1 and box["right"] >= -1, box
        assert not box["scrolls"] or box["overflow"] in ("auto", "scroll"), box


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_comparison_table_reads_as_text(page, server, lang):
    """The comparison table links every cell to its evidence, but only the encoding names are
    link-coloured; the other cells' links take the text colour with an underline."""
    page.goto(_url(server, lang, "comparison.md"), wait_until="load")
    colours = page.evaluate("""() => {
      const t = document.querySelector('.posenc-compare table');
      const text = getComputedStyle(t.querySelector('td')).color;
      const links = [...t.querySelectorAll('td a')].map(a => ({
        first: a.closest('td') === a.closest('tr').firstElementChild,
        text: getComputedStyle(a).color === text,
        underline: getComputedStyle(a).textDecorationLine.includes('underline'),
      }));
      return links;
    }""")
    cells = [c for c in colours if not c["first"]]
    assert len(cells) > 50
    assert all(c["text"] and c["underline"] for c in cells), cells[:3]
    assert not all(c["text"] for c in colours if c["first"])


def _doctest_block(md: str) -> str:
    notebooks = import_hook("notebooks")
    blocks = [b for b in notebooks.code_blocks(md) if b.lstrip().startswith(">>>")]
    return notebooks.plain_code(blocks[0], keep_errors=False)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_copy_button_copies_code_without_prompts(browser, server, lang):
    """The copy button on a doctest block puts the code on the clipboard: no >>> or ... prompts,
    no output lines, exactly the statements of the block."""
    context, pg = _open(browser, permissions=["clipboard-read", "clipboard-write"])
    try:
        pg.goto(_url(server, lang, "sinusoidal.md"), wait_until="load")
        block = pg.locator("div.highlight[data-copy]").first
        block.hover()
        block.locator("button[data-clipboard-target]").click()
        copied = pg.evaluate("() => navigator.clipboard.readText()")
    finally:
        context.close()
    expected = _doctest_block((DOCS / lang / "sinusoidal.md").read_text(encoding="utf-8"))
    assert ">>>" not in copied and "\n..." not in copied
    assert copied.strip() == expected.strip()


@pytest.mark.parametrize("src,dst", [("en", "zh"), ("zh", "en")])
def test_language_switch_lands_on_the_twin(page, server, src, dst):
    name = "sinusoidal.md"
    page.goto(_url(server, src, name))
    page.hover(".md-header .md-select")
    page.click(f'.md-select__link[hreflang="{dst}"]')
    page.wait_for_load_state("load")
    assert page.url == _url(server, dst, name)
    assert page.evaluate("() => document.documentElement.lang") == dst


@pytest.mark.parametrize("src,dst", [("en", "zh"), ("zh", "en")])
def test_language_switch_keeps_the_section(page, server, src, dst):
    page.goto(_url(server, src, "rope.md") + "#pairings")
    page.hover(".md-header .md-select")
    page.click(f'.md-select__link[hreflang="{dst}"]')
    page.wait_for_load_state("load")
    assert page.url == _url(server, dst, "rope.md") + "#pairings"


@pytest.mark.parametrize("src,dst", [("en", "zh"), ("zh", "en")])
def test_language_switch_keeps_the_place_without_a_hash(page, server, src, dst):
    """Scrolled down to a section of a page whose URL has no hash, the language switch opens the
    twin at that section (issue 23: /zh/rope/ opened at the top); at the top of a page it opens
    the top."""
    page.goto(_url(server, src, "rope.md"))
    # every block laid out first: a lazy block above drawn mid-scroll moves the page (another
    # section then is in view, and carried), which is not what this test is about
    page.add_style_tag(
        content="[data-lazy], .posenc-figure { content-visibility: visible !important; }"
    )
    page.hover(".md-header .md-select")
    href = page.eval_on_selector(f'.md-select__link[hreflang="{dst}"]', "a => a.href")
    assert urlsplit(href).fragment == ""  # at the top: no section to carry
    page.evaluate("() => document.getElementById('pairings').scrollIntoView()")
    page.mouse.wheel(0, 120)  # a little further into the section, as a reader would be
    page.wait_for_timeout(200)
    assert urlsplit(page.url).fragment == ""
    page.hover(".md-header .md-select")
    page.click(f'.md-select__link[hreflang="{dst}"]')
    page.wait_for_load_state("load")
    assert page.url == _url(server, dst, "rope.md") + "#pairings"


def test_scheme_follows_the_system_until_the_reader_chooses(browser, server):
    """A reader whose system prefers dark gets the dark scheme on first view, and the light one
    when the system prefers light; once the reader picks a scheme with the toggle, that choice
    wins over the system's on the next page (issue 23: the site ignored prefers-color-scheme)."""
    scheme = "() => document.body.getAttribute('data-md-color-scheme')"
    context, pg = _open(browser, color_scheme="dark")
    try:
        pg.goto(_url(server, "en", "rope.md"), wait_until="load")
        assert pg.evaluate(scheme) == "slate"
        pg.emulate_media(color_scheme="light")
        pg.wait_for_function(f"() => ({scheme})() === 'default'")
        pg.emulate_media(color_scheme="dark")
        pg.wait_for_function(f"() => ({scheme})() === 'slate'")
        pg.click("form[data-posenc-palette] label:not([hidden])")  # the reader picks light
        assert pg.evaluate(scheme) == "default"
        pg.goto(_url(server, "zh", "sinusoidal.md"), wait_until="load")
        assert pg.evaluate(scheme) == "default"  # the system still prefers dark
    finally:
        context.close()
    context, pg = _open(browser, color_scheme="light")
    try:
        pg.goto(_url(server, "zh", "rope.md"), wait_until="load")
        assert pg.evaluate(scheme) == "default"
    finally:
        context.close()


def _search(pg, query):
    pg.click("input.md-search__input")
    pg.keyboard.type(query)  # inserted as text, as an IME commits it...
    pg.keyboard.press("End")  # ...and the search runs on the key-up that follows
    pg.wait_for_selector(".md-search-result__item", timeout=15000)
    return pg.eval_on_selector_all(".md-search-result__link", "els => els.map(e => e.href)")


def test_chinese_search_finds_the_chinese_page(page, server):
    page.goto(_url(server, "zh", "sinusoidal.md"))
    links = _search(page, "位置编码")
    assert links and all("/zh/" in href for href in links), links


def _indexes(pg):
    """The full search indexes a page fetched. Material's bundle fetches search_index.json with
    every page, a stub of the index's settings without documents (hooks/zh_search.py); the
    search worker fetches the full index on the first query (docs/assets/posenc-search.js)."""
    return [u for u in pg.requests if u.split("?")[0].endswith("/search/full_index.json")]


@pytest.mark.parametrize("lang,query", [("zh", "rotation"), ("en", "ALiBi"), ("zh", "ALiBi")])
def test_each_language_searches_its_own_pages(page, server, lang, query):
    page.goto(_url(server, lang, "index.md"))
    page.wait_for_load_state("networkidle")
    assert _indexes(page) == []  # the index waits for the reader (docs/assets/posenc-search.js)
    links = _search(page, query)
    assert links
    in_zh = [("/zh/" in href) for href in links]
    assert all(in_zh) if lang == "zh" else not any(in_zh), links
    own = (
        f"{server}/zh/search/full_index.json"
        if lang == "zh"
        else f"{server}/search/full_index.json"
    )
    assert _indexes(page) == [own], _indexes(page)


@pytest.mark.parametrize("lang,how", [("en", "shortcut"), ("zh", "tap")])
def test_search_index_loads_when_the_reader_starts_searching(browser, server, lang, how):
    """Not with the page (issue 13: the zh index alone is ~250 KiB gzipped): on a desktop,
    Material's shortcut (/) opens search; on a phone, a tap on the search icon. Only then is the
    page's own index fetched, and the search works."""
    on_phone = how == "tap"
    context, pg = _open(
        browser, PHONE if on_phone else DESKTOP, is_mobile=on_phone, has_touch=on_phone
    )
    try:
        pg.goto(_url(server, lang, "sinusoidal.md"))
        pg.wait_for_load_state("networkidle")
        assert _indexes(pg) == []
        if on_phone:
            pg.tap(".md-header__button[for=__search]")
        else:
            pg.keyboard.press("/")
        pg.keyboard.type("ALiBi")
        pg.wait_for_selector(".md-search-result__item", timeout=15000)
        links = pg.eval_on_selector_all(".md-search-result__link", "els => els.map(e => e.href)")
        assert links and all(("/zh/" in href) == (lang == "zh") for href in links), links
        own = f"{server}/{'zh/' if lang == 'zh' else ''}search/full_index.json"
        assert _indexes(pg) == [own], _indexes(pg)
        assert not pg.console_errors, pg.console_errors
    finally:
        context.close()


@pytest.mark.parametrize("query", ["长上下文", "训练长度", "上下文长度"])
def test_chinese_query_is_searched_and_highlighted_by_words(page, server, query):
    """Material's own cut searched 长上下文 as 长, 上, 下 and opened pages with ?h=下. Words now:
    no single-character search term, and every mark on the opened page is a whole word."""
    page.goto(_url(server, "zh", "index.md"))
    links = _search(page, query)
    terms = set()
    for href in links:
        terms.update(parse_qs(urlsplit(href).query).get("h", [""])[0].split())
    assert terms and all(len(t) > 1 for t in terms), terms
    target = next(href for href in links if parse_qs(urlsplit(href).query).get("h"))
    page.goto(target)
    page.wait_for_selector("mark[data-md-highlight]", timeout=15000)  # after the index loads
    marks = page.eval_on_selector_all(
        "mark[data-md-highlight]", "els => els.map(e => e.textContent)"
    )
    assert marks and all(len(m) > 1 for m in marks), (unquote(target), marks[:10])


@pytest.mark.parametrize(
    "query",
    ["插值", "内插", "长度外推", "外推", "旋转式位置编码", "旋转位置编码", "词向量", "词元嵌入"],
)
def test_chinese_terms_and_aliases_find_pages(page, server, query):
    """The words readers type, glossary terms and their aliases (hooks/terms.yml), find pages."""
    page.goto(_url(server, "zh", "index.md"))
    links = _search(page, query)
    assert links and all("/zh/" in href for href in links), links


# --- Math at build time (hooks/katex.py) and figures in the page's language (site_figures) -----

MATH_STATIC = r"""
() => {
  const spans = [...document.querySelectorAll('.arithmatex')];
  const visible = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  return {
    total: spans.length,
    untypeset: spans.filter(s => !(s.querySelector('.katex-html') && s.querySelector('math'))).length,
    invisible: spans.filter(s => !visible(s.querySelector('.katex-html') || s)).length,
    raw: spans.filter(s => /\\[([]/.test(s.querySelector('.katex-html')?.textContent ?? s.textContent)).length,
    // display equations at 1280 px: none wider than its box, so nothing is cut off
    cut: [...document.querySelectorAll('div.arithmatex')].filter(d => d.scrollWidth > d.clientWidth + 1)
      .map(d => d.querySelector('annotation')?.textContent.slice(0, 60)),
    fonts: [...document.fonts].filter(f => f.family.startsWith('KaTeX') && f.status === 'error').length,
  };
}
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_math_is_typeset_at_build_time(request, built_site, server, lang):
    """With JavaScript off, every page shows its math typeset (KaTeX's HTML and CSS, with MathML
    for screen readers), no raw TeX, no equation cut off at 1280 px. (With JavaScript on, that no
    page requests a script that typesets math is checked by ``test_browser_phone.py::test_page_on_a_phone``.)
    A page whose served files and this check are unchanged since it passed is not loaded again
    (tests/verdicts.py); the count of pages with math is stored with each pass."""
    from verdicts import Verdicts, mark

    here = Path(__file__).parent
    verdicts = Verdicts(
        request.config,
        "no-js-math",
        built_site.path,
        [here / "test_browser.py", here / "verdicts.py"],
    )
    stored = {name: verdicts.reuse(f"{lang}/{name}") for name in pages("en")}
    mark(request, all(facts is not None for facts in stored.values()))
    with_math = sum(facts["math"] > 0 for facts in stored.values() if facts is not None)
    offline = None
    try:
        for name in (name for name, facts in stored.items() if facts is None):
            if offline is None:
                offline, off = _open(
                    request.getfixturevalue("browser"), DESKTOP, java_script_enabled=False
                )
            off.requests.clear()
            off.goto(_url(server, lang, name), wait_until="load")
            off.evaluate("() => document.fonts.ready")
            report = off.evaluate(MATH_STATIC)
            assert report["untypeset"] == report["invisible"] == report["raw"] == 0, (name, report)
            assert not report["cut"] and report["fonts"] == 0, (name, report)
            with_math += report["total"] > 0
            verdicts.record(f"{lang}/{name}", off.requests, server, {"math": report["total"]})
        assert with_math >= 15, with_math  # the check saw the math pages
    finally:
        if offline is not None:
            offline.close()


def test_figures_speak_the_page_language(page, server):
    """A Chinese page draws its figures in Chinese (labels and aria-label); SVG text stays text;
    no figure has a white background or matplotlib's metadata."""
    for lang in ("en", "zh"):
        page.goto(_url(server, lang, "alibi.md"), wait_until="load")
        figs = page.evaluate("""() => [...document.querySelectorAll('.posenc-figure svg')].map(s => ({
            label: s.getAttribute('aria-label') || '', text: [...s.querySelectorAll('text')].map(t => t.textContent).join(' '),
            html: s.outerHTML.length, metadata: !!s.querySelector('metadata'),
            white: /fill: ?#ffffff/.test(s.innerHTML) }))""")
        assert figs, lang
        han = [any("\u4e00" <= c <= "\u9fff" for c in f["label"] + f["text"]) for f in figs]
        assert all(han) if lang == "zh" else not any(han), (lang, figs)
        assert not any(f["metadata"] or f["white"] for f in figs), lang

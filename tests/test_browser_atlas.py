"""Finding one model on the atlas, and identifiers in the site's search (issue 23), in headless
Chromium on a 390 px phone, both languages.

- A search for a model type from the home page offers that type's row (``#mt-<type>``) as the
  first section of the first result; the section opens the atlas with the row on screen, and so
  does the result for the page itself (``atlas/?h=<type>``).
- The filter box (hooks/atlas.py, assets/posenc.js) is labelled in the page's language, is
  typed into with the keyboard and keeps exactly the rows and names that match, under the
  headings of their sections, each row with its posenc call; it requests nothing; emptied, it
  gives the page back. Without JavaScript there is no box and every row is there.
- An identifier in an atlas row is never broken across lines, at 360 px either.
- ``_`` is no search separator: ``rotate_half`` finds the page that defines it first, and the
  results for ``position_ids`` show it whole.

Shares tests/test_browser.py's helpers; needs /usr/bin/chromium (see there).
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from ci_rule import require
from sitecheck import DOCS, LANGS, load_hook
from test_browser import DESKTOP, PHONE, _open, _url

pytestmark = [pytest.mark.site, pytest.mark.browser]

require("mkdocs")  # the hook imports it: the site's toolchain (not on a package-only leg)
atlas = load_hook("atlas")


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads((DOCS / "assets" / "atlas.json").read_text(encoding="utf-8"))


@pytest.fixture
def phone(browser, server):
    context, pg = _open(browser, PHONE, is_mobile=True, has_touch=True)
    yield pg
    context.close()


def _atlas_path(lang: str) -> str:
    return "/zh/atlas/" if lang == "zh" else "/atlas/"


def _results(pg, query):
    """The hrefs of the results of ``query``, typed into the open search box."""
    pg.fill("input.md-search__input", "")
    pg.keyboard.type(query)
    pg.keyboard.press("End")  # the search runs on the key-up that follows
    # the results of this query, not of the one before: a link highlights it (?h=)
    pg.wait_for_function(
        """q => [...document.querySelectorAll('.md-search-result__link')]
                 .some(a => new URL(a.href).searchParams.get('h') === q)""",
        arg=query,
        timeout=15000,
    )
    return pg.eval_on_selector_all(".md-search-result__link", "els => els.map(e => e.href)")


# the row is on screen below the header (the id is on the row's first link)
ROW_IN_VIEW = """id => {
  const r = document.getElementById(id).closest('tr, li, span, p').getBoundingClientRect();
  const top = document.querySelector('.md-header').getBoundingClientRect().bottom;
  return r.height > 0 && r.top >= top - 1 && r.bottom <= innerHeight + 1;
}"""

SEARCHES = {
    "en": ("mixtral", "gemma2", "qwen2_vl", "deepseek_v3"),
    "zh": ("deepseek_v3", "qwen2_vl"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_searches_for_model_types_and_identifiers(phone, server, lang):
    """A model type (issue 23: mixtral landed at #conv-llama, 7,277 px above its row;
    deepseek_v3 and qwen2_vl had the MLA page and the FAQ first) gives the atlas first, its row
    as the first section, and both open the atlas with the row on screen. "_" is no separator:
    rotate_half gives the page that defines it first (it was 6th: the query searched "rotate"
    OR "half"), and position_ids, where a result shows its match, shows it whole (40 pages, the
    FAQ and the home page first). One page, one index: the queries follow one another."""
    phone.goto(_url(server, lang, "index.md"), wait_until="load")
    phone.tap(".md-header__button[for=__search]")
    for query in SEARCHES[lang]:
        links = _results(phone, query)
        assert urlsplit(links[0]).path == _atlas_path(lang), (query, links[:3])
        sections = [link for link in links if urlsplit(link).fragment]
        assert urlsplit(sections[0]).fragment == f"mt-{query}", (query, links[:3])
        assert urlsplit(sections[0]).path == _atlas_path(lang), (query, links[:3])
    rope = _results(phone, "rotate_half")
    assert urlsplit(rope[0]).path == f"{'/zh' if lang == 'zh' else ''}/rope/", rope[:4]
    _results(phone, "position_ids")
    marks = phone.eval_on_selector_all(
        ".md-search-result__item",
        "els => els.map(e => [...e.querySelectorAll('mark')].map(m => m.textContent))",
    )
    words = [m.lower() for ms in marks for m in ms]
    assert len(marks) < 30 and words, marks
    assert all(w.startswith("position_ids") for w in words), sorted(set(words))
    # the row's own result (en), the page's result (zh: atlas/?h=<type>): the row on screen
    target = sections[0] if lang == "en" else links[0]
    phone.goto(target, wait_until="load")
    phone.wait_for_timeout(1700)  # posenc.js keeps a linked row in view while blocks are drawn
    assert phone.evaluate(ROW_IN_VIEW, f"mt-{query}"), (target, phone.url)


FILTERED = """() => {
  const shown = e => e.getClientRects().length > 0;
  const rows = [...document.querySelectorAll("article tr:has([id^='mt-'])")];
  const heading = t => { let e = t.closest('.md-typeset__scrollwrap') || t;
    while (e && !e.matches('h3')) e = e.previousElementSibling; return e; };
  return {
    total: rows.length,
    rows: rows.filter(shown).map(r => ({
      name: r.querySelector("[id^='mt-']").id.slice(3),
      text: r.textContent.toLowerCase(),
      call: r.cells[r.cells.length - 1].textContent,
      heading: shown(heading(r.closest('table'))) ? heading(r.closest('table')).id : null,
    })),
    names: [...document.querySelectorAll("article [data-mt]")].filter(shown).map(e => e.dataset.mt),
    method: shown(document.getElementById('method')),
    status: document.querySelector('[data-atlas-filter] [role=status]').textContent,
  };
}"""


@pytest.mark.parametrize("lang", LANGS)
def test_the_filter_box_keeps_the_matching_rows(phone, server, lang, record):
    """Typing "qwen" (keyboard, into the box found by its label) keeps the rows whose text holds
    it, every Qwen type among them, each under its convention's heading and with its posenc call,
    and the matching names of the unverified lists; the rest of the page is hidden and the count
    is said. "qwen2-vl" finds qwen2_vl; a word nothing matches says so; emptied, the box gives the
    page back. Nothing is requested on the way."""
    pg = phone
    pg.goto(_url(server, lang, "atlas.md"), wait_until="load")
    box = pg.get_by_label(atlas.TEXT[lang]["filter"], exact=True)
    assert box.is_visible() and box.get_attribute("type") == "search"
    before = pg.evaluate(FILTERED)
    assert before["total"] > 150 and len(before["rows"]) == before["total"] and before["method"]
    pg.requests.clear()
    box.focus()
    pg.keyboard.type("qwen")
    got = pg.evaluate(FILTERED)
    qwen = {mt for mt, e in record["types"].items() if "qwen" in mt}
    in_tables = {mt for mt in qwen if record["types"][mt]["convention"]}
    names = {r["name"] for r in got["rows"]}
    assert in_tables <= names and len(in_tables) >= 5, sorted(in_tables - names)
    assert all("qwen" in r["text"] for r in got["rows"]), [r["name"] for r in got["rows"]]
    assert all(r["heading"] and r["heading"].startswith("conv-") for r in got["rows"]), got["rows"]
    assert all("(" in r["call"] for r in got["rows"]), [r["call"] for r in got["rows"]]
    assert set(got["names"]) == {n for n in before["names"] if "qwen" in n}, got["names"]
    assert all("qwen" in n for n in got["names"]), got["names"]
    assert not got["method"]  # the prose is hidden while the box filters
    shown_types = names | set(got["names"])
    assert str(len(shown_types)) in got["status"], got["status"]
    box.fill("qwen2-vl")
    got = pg.evaluate(FILTERED)
    assert "qwen2_vl" in {r["name"] for r in got["rows"]}
    assert all("qwen2_vl" in r["text"] for r in got["rows"]), [r["name"] for r in got["rows"]]
    box.fill("no such model")
    got = pg.evaluate(FILTERED)
    assert not got["rows"] and not got["names"] and got["status"] == atlas.TEXT[lang]["filter_none"]
    box.fill("")
    got = pg.evaluate(FILTERED)
    assert len(got["rows"]) == before["total"] and got["method"] and not got["status"]
    assert pg.requests == [], pg.requests


BROKEN = """() => [...document.querySelectorAll(
    "article tr:has([id^='mt-']) code, article [data-mt] code")]
  .filter(c => !/\\s/.test(c.textContent) && c.getClientRects().length > 1)
  .map(c => c.textContent)"""

WIDE = """() => [...document.querySelectorAll("article table[data-atlas]")]
  .filter(t => t.scrollWidth > t.clientWidth + 1 ||
               t.getBoundingClientRect().right > t.parentElement.getBoundingClientRect().right + 1)
  .map(t => t.rows[0].textContent.slice(0, 40))"""


def test_identifiers_are_never_broken_and_no_js_shows_every_row(browser, server, record):
    """At 360 px and at 1280 px no identifier of an atlas row or list breaks across lines
    (issue 23: "deepseek / _v3"), no row is wider than the text column, and a link's underline is drawn
    below the underscores of its code ("qwen2 vl"). Without JavaScript there is no filter box and
    every row is on the page."""
    context, pg = _open(browser, {"width": 360, "height": 780}, is_mobile=True)
    try:
        pg.goto(_url(server, "en", "atlas.md"), wait_until="load")
        pg.add_style_tag(content="[data-lazy] { content-visibility: visible !important; }")
        offset = pg.evaluate("""() => { const a = document.querySelector("a[id='mt-qwen2_vl']");
          return parseFloat(getComputedStyle(a).textUnderlineOffset) /
                 parseFloat(getComputedStyle(a.querySelector('code')).fontSize); }""")
        assert offset >= 0.3, offset
        for viewport in ({"width": 360, "height": 780}, DESKTOP):
            pg.set_viewport_size(viewport)
            assert pg.evaluate(BROKEN) == [], viewport
            assert pg.evaluate(WIDE) == [], viewport
    finally:
        context.close()
    context, pg = _open(browser, DESKTOP, java_script_enabled=False)
    try:
        pg.goto(_url(server, "zh", "atlas.md"), wait_until="load")
        assert not pg.locator("[data-atlas-filter]").is_visible()
        ids = pg.eval_on_selector_all("article [id^='mt-']", "els => els.map(e => e.id.slice(3))")
        assert sorted(ids) == sorted(record["types"])
    finally:
        context.close()

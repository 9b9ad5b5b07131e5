"""Every built page of both languages on a phone, one browser pass per page (issue 23).

Each page is loaded once, at 390 px, and everything is checked in that load: console errors,
requests, typeset math, axe-core (tests/test_a11y.py holds the script and the pages checked in
the dark scheme too), nothing wider than the screen, and, at 390 and 360 px, how display
formulas break, that figures show whole and legible, that no table hides a column and no
heading takes a line for its hidden link. Needs /usr/bin/chromium (see tests/test_browser.py).

The pages are split into ``SHARDS`` groups, named at the end of each test id
(``[rope.md-en@phone-0]``): ``make test`` sends each group whole to one worker and spreads the
groups over the workers (tests/conftest.py's ``FileScheduling``); as one unit the pass kept one
worker busy for most of the run while the other finished early (issue 23: the time budget).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sitecheck import pages
from test_browser import MATH_REPORT, OVERFLOW, PHONE, _open, _url
from verdicts import Verdicts, mark

pytestmark = [pytest.mark.site, pytest.mark.browser]


# What a reader on a phone meets (issue 23), measured on the page as laid out: every block is
# drawn first (the lazy blocks and figures of content-visibility, as when scrolled to).
PHONE_LAYOUT = r"""
(minText) => {
  const out = {math: [], figures: [], tables: [], headings: [], checked: {math: 0, figures: 0, tables: 0}};
  // an atom's brackets: KaTeX writes ")]" as one atom; a bracket with a script holds more text
  const brackets = a => (a.matches('.mopen') ? 1 : a.matches('.mclose') ? -1 : 0) *
    (a.children.length ? 1 : a.textContent.length);
  for (const d of document.querySelectorAll('div.arithmatex')) {
    const html = d.querySelector('.katex-html');
    const name = (d.querySelector('math') || d).textContent.slice(0, 50);
    if (!html) { out.math.push(`${name}: not typeset`); continue; }
    out.checked.math++;
    const k = d.querySelector('.katex'), ks = getComputedStyle(k);
    const column = d.clientWidth - parseFloat(ks.paddingLeft) - parseFloat(ks.paddingRight);
    const bases = [...html.querySelectorAll('.base, .katex-base')];  // .katex-base: KaTeX >= 0.18
    const rects = bases.map(b => b.getBoundingClientRect());
    const natural = rects.reduce((sum, r) => sum + r.width, 0);
    const breaks = new Set(rects.flatMap((r, i) => (i && r.left < rects[i - 1].left + 1) ? [i] : []));
    // one line when it fits
    if (breaks.size && natural < column - 1) out.math.push(`${name}: fits (${natural | 0} of ${column | 0} px) but takes ${breaks.size + 1} lines`);
    // a break only after a top-level relation or between the parts a ",\qquad" separates
    let depth = 0;
    bases.forEach((b, i) => {
      const atoms = [...b.children].filter(a => !a.matches('.strut, .katex-strut, .mspace'));
      for (const a of atoms) depth += brackets(a);
      if (!breaks.has(i + 1)) return;
      const last = atoms[atoms.length - 1];
      const partEnd = b.parentElement.matches('.posenc-part') && !b.nextElementSibling;
      if (depth !== 0 || !(partEnd || (last && last.matches('.mrel'))))
        out.math.push(`${name}: broken after "${b.textContent.slice(-15)}" (depth ${depth})`);
    });
    // a piece wider than the column scrolls in the equation's own box
    if (d.scrollWidth > d.clientWidth + 1 && !['auto', 'scroll'].includes(getComputedStyle(d).overflowX))
      out.math.push(`${name}: cut off`);
  }
  document.querySelectorAll('.posenc-figure').forEach((f, n) => {
    out.checked.figures++;
    const shown = [...f.querySelectorAll(':scope > svg, :scope > img')].filter(s => s.getBoundingClientRect().width > 0);
    if (shown.length !== 1) { out.figures.push(`figure ${n}: ${shown.length} renditions shown`); return; }
    const r = shown[0].getBoundingClientRect(), box = f.getBoundingClientRect();
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.right > document.documentElement.clientWidth)
      out.figures.push(`figure ${n}: ${r.left | 0}-${r.right | 0} px in a box of ${box.left | 0}-${box.right | 0} px`);
    let smallest = Infinity;
    for (const text of shown[0].querySelectorAll('text')) {
      if (!text.textContent.trim()) continue;
      const m = text.getScreenCTM();
      smallest = Math.min(smallest, parseFloat(getComputedStyle(text).fontSize) * Math.hypot(m.a, m.b));
    }
    if (smallest < minText) out.figures.push(`figure ${n}: text of ${smallest.toFixed(1)} px`);
  });
  for (const t of document.querySelectorAll('article table')) {
    out.checked.tables++;
    const box = t.closest('.md-typeset__scrollwrap') || t;
    const right = Math.max(...[...t.querySelectorAll('td, th')].filter(c => c.getBoundingClientRect().width).map(c => c.getBoundingClientRect().right), 0);
    if (t.scrollWidth > box.clientWidth + 1 || right > box.getBoundingClientRect().right + 1)
      out.tables.push(`${(t.rows[0] || t).textContent.trim().slice(0, 40)}: ${t.scrollWidth} px in ${box.clientWidth} px`);
  }
  for (const h of document.querySelectorAll('article :is(h1, h2, h3, h4, h5, h6)')) {
    const link = h.querySelector('.headerlink');
    if (!link) continue;
    const tall = h.getBoundingClientRect().height;
    link.style.display = 'none';
    const without = h.getBoundingClientRect().height;
    link.style.display = '';
    if (tall > without + 1) out.headings.push(`${h.id}: ${tall | 0} px, ${without | 0} px without its link`);
  }
  return out;
}
"""
DRAW_ALL = "[data-lazy], .posenc-figure { content-visibility: visible !important; }"
MOUNTED = """() => [...document.querySelectorAll('pre > code')]
  .filter(c => c.checkVisibility({contentVisibilityAuto: true}))
  .every(c => c.scrollWidth <= c.clientWidth + 1 || c.hasAttribute('tabindex'))"""
NARROW_PHONE = {"width": 360, "height": 780}
MIN_FIGURE_TEXT_PX = 9.0  # at 360 px: a figure's smallest word


@pytest.fixture(scope="module")
def phone_tab(browser, server):
    """One phone tab per test worker, reused page after page (the listeners of _open record
    each page's requests and console errors; a test clears them before it loads its page).
    No touch screen: Material makes a scrolling code block focusable only where the pointer can
    hover, so axe's keyboard rules are checked as a phone with a keyboard meets the page."""
    context, pg = _open(browser, PHONE, is_mobile=True)
    yield pg
    context.close()


SHARDS = 4


def shard(k: int) -> list[tuple[str, str]]:
    """The (page, language) pairs of shard k: pages alternate between two shards per language,
    and a page's English and Chinese versions fall in different halves (the heavy pages, atlas
    and sinusoidal, are spread rather than stacked)."""
    pairs = []
    for i, name in enumerate(pages("en")):
        pairs += [(name, "en", i % 2), (name, "zh", 2 + (i + 1) % 2)]
    return [(name, lang) for name, lang, s in pairs if s == k]


def test_the_shards_cover_every_page_once():
    every = [pair for k in range(SHARDS) for pair in shard(k)]
    assert sorted(every) == sorted((n, lang) for n in pages("en") for lang in ("en", "zh"))
    assert all(len(shard(k)) >= len(every) // SHARDS - 1 for k in range(SHARDS))


def test_each_shard_is_one_unit_of_work_and_other_tests_go_by_file():
    """What tests/conftest.py's scheduler makes of the ids: a shard's pages share one unit (one
    worker), the shards are four units, and a test without a group (a page's doctests) goes with
    its file."""
    from conftest import FileScheduling

    split = FileScheduling._split_scope
    here = "tests/test_browser_phone.py::test_page_on_a_phone"
    units = {split(None, f"{here}[{p.id}]") for p in _grouped()}
    assert units == {f"tests/test_browser_phone.py@phone-{k}" for k in range(SHARDS)}
    page = "docs/en/rope.md::sybil:pages,line:{},column:1"
    assert {split(None, page.format(n)) for n in (3, 40)} == {"docs/en/rope.md"}
    assert split(None, "tests/test_x.py::test_y[a@b.c-1]") == "tests/test_x.py"


@pytest.fixture(scope="module")
def phone_verdicts(request, built_site):
    """The stored passes of check_page (tests/verdicts.py): decided by this file, the helpers and
    scripts it takes from test_browser.py and test_a11y.py, and axe-core."""
    from test_a11y import AXE

    here = Path(__file__).parent
    code = [here / f for f in ("test_browser_phone.py", "test_browser.py", "test_a11y.py")]
    return Verdicts(request.config, "phone", built_site.path, [*code, here / "verdicts.py", AXE])


def _grouped() -> list:
    """Every (page, language) pair, its id naming its shard's group (tests/conftest.py)."""
    return [
        pytest.param(name, lang, id=f"{name}-{lang}@phone-{k}")
        for k in range(SHARDS)
        for name, lang in shard(k)
    ]


@pytest.mark.parametrize("name, lang", _grouped())
def test_page_on_a_phone(request, phone_verdicts, server, lang, name):
    on_a_phone(request, phone_verdicts, server, lang, name)


def on_a_phone(request, verdicts, server, lang, name):
    """check_page, or its stored pass while nothing the page served or the check reads has
    changed since it passed (tests/verdicts.py); the browser starts only for a page to check."""
    key = f"{lang}/{name}"
    reused = verdicts.reuse(key) is not None
    mark(request, reused)
    if reused:
        return
    pg = request.getfixturevalue("phone_tab")
    check_page(pg, server, lang, name)
    verdicts.record(key, pg.requests, server)


def check_page(pg, server, lang, name):
    """Every page of both languages, loaded once on a phone (390 px), with everything checked in
    that one load (issue 23): it loads with zero console errors (a 404 of any request counts) and
    no request leaving the site or fetching a script that typesets math; its math is typeset;
    axe-core finds no violation in the light scheme (every rule) and, on the pages of
    test_a11y.DARK_PAGES, in the dark one (the colour rules); nothing is wider than the screen;
    then at 390 and at 360 px: each display formula is on one line when it fits and is otherwise
    broken only after a top-level relation or between the parts a comma and a wide space
    separate (never inside brackets or a subscript), a piece still wider scrolling in its own
    box; each figure is shown whole, in one rendition, its smallest word at least 9 px at 360 px;
    no table hides a column; no heading takes a line for its hidden link."""
    from test_a11y import AXE, COLOUR_RULES, DARK_PAGES, RUN_AXE

    pg.set_viewport_size(PHONE)
    pg.requests.clear()
    pg.console_errors.clear()
    response = pg.goto(_url(server, lang, name), wait_until="load")
    assert response is not None and response.ok
    assert pg.evaluate("() => document.documentElement.lang") == lang
    pg.evaluate("() => document.fonts.ready")
    report = pg.evaluate(MATH_REPORT)
    assert not report["raw"] and report["errors"] == 0, report
    # Material's bundle makes a code block that scrolls focusable once it is drawn (tabindex)
    pg.wait_for_function(MOUNTED)
    pg.add_script_tag(path=str(AXE))
    for scheme in ("default", "slate") if name in DARK_PAGES else ("default",):
        violations = pg.evaluate(RUN_AXE, [scheme, COLOUR_RULES])
        assert not violations, (scheme, violations)
    pg.evaluate("() => document.body.setAttribute('data-md-color-scheme', 'default')")
    overflow = pg.evaluate(OVERFLOW)
    assert overflow["scroll"] <= overflow["width"] and not overflow["wide"], overflow
    pg.add_style_tag(content=DRAW_ALL)
    for viewport in (PHONE, NARROW_PHONE):
        pg.set_viewport_size(viewport)
        layout = pg.evaluate(PHONE_LAYOUT, MIN_FIGURE_TEXT_PX if viewport is NARROW_PHONE else 0)
        problems = {k: v for k, v in layout.items() if k != "checked" and v}
        assert not problems, (viewport["width"], problems)
        overflow = pg.evaluate(OVERFLOW)
        assert overflow["scroll"] <= overflow["width"] and not overflow["wide"], overflow
    assert not pg.console_errors, pg.console_errors
    foreign = [u for u in pg.requests if not u.startswith(server) and not u.startswith("data:")]
    assert not foreign, foreign
    # math is typeset at build time: no page requests a script that typesets it (issue 13)
    scripts = [u for u in pg.requests if u.split("?")[0].endswith((".js", ".mjs"))]
    math_js = [u for u in scripts if any(k in u.lower() for k in ("mathjax", "katex", "tex-"))]
    assert not math_js, math_js


def test_the_phone_pass_sees_every_kind_of_block(phone_tab, server):
    """The layout checks above measure what they claim to: on /rope/ they see its formulas and
    figures, on the API page its tables; a formula that would fit but is squeezed off
    on one line (Material's phone rule, the cause of issue 23, put back) is reported broken, and
    a figure forced to 900 px (the old minimum width, 32rem) is reported cut."""
    pg = phone_tab
    pg.set_viewport_size(PHONE)
    pg.goto(_url(server, "en", "rope.md"), wait_until="load")
    pg.add_style_tag(content=DRAW_ALL)
    seen = pg.evaluate(PHONE_LAYOUT, 0)["checked"]
    assert seen["math"] >= 5 and seen["figures"] >= 3, seen
    pg.add_style_tag(
        content=".posenc-figure svg { min-width: 900px; } "
        ".md-typeset div.arithmatex > .katex { width: min-content !important; }"
    )
    bad = pg.evaluate(PHONE_LAYOUT, 0)
    assert bad["figures"] and bad["math"], bad
    pg.goto(_url(server, "en", "api-rope.md"), wait_until="load")
    pg.add_style_tag(content=DRAW_ALL)
    assert pg.evaluate(PHONE_LAYOUT, 0)["checked"]["tables"] >= 10

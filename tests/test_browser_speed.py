"""The page-speed changes of issue 13 in headless Chromium.

- The light/dark toggle is posenc's own (overrides/partials/palette.html, assets/posenc.js), not
  Material's palette component: it switches the scheme, shows the other toggle, keeps the choice
  across reloads and pages, answers Enter, and logs no console error.
- Lazy blocks (hooks/lazy_blocks.py): on a Lighthouse-sized phone each ``data-lazy`` block's
  real height is at most its ``contain-intrinsic-size`` estimate (a smaller box would let its
  text, which accessibility tools still see, lie over the footer), and a link to a heading in the
  lazy part of a page lands on that heading.
- The copy button written at build time (hooks/code_blocks.py) copies an API page's doctest
  example without prompts.
- Material's bundle finds on <html> what it sets there as it starts (issue 25): the head sets it
  before the body is parsed (overrides/main.html), so the bundle's writes restyle nothing.

Fixtures and helpers come from tests/test_browser.py (same server, Chromium and skip rules).
"""

from __future__ import annotations

import re

import pytest

from test_browser import _open, _url, page

# test_browser.py's fixtures, found by pytest under these names in this module
FIXTURES = (page,)  # server and browser: tests/conftest.py

pytestmark = [pytest.mark.site, pytest.mark.browser]

# Lighthouse's mobile preset (Moto G Power): 412 x 823 CSS px at 1.75 device pixels per px
LIGHTHOUSE_PHONE = {"width": 412, "height": 823}

VISIBLE_TOGGLE = "form[data-posenc-palette] label:not([hidden])"


def _scheme(pg) -> str:
    return pg.evaluate("() => document.body.getAttribute('data-md-color-scheme')")


def _toggle_state(pg) -> dict:
    return pg.evaluate(
        """() => {
          const labels = [...document.querySelectorAll('form[data-posenc-palette] label')];
          return {
            scheme: document.body.getAttribute('data-md-color-scheme'),
            visible: labels.filter(l => !l.hidden && l.getBoundingClientRect().width > 0)
                           .map(l => l.getAttribute('for')),
            checked: [...document.querySelectorAll('form[data-posenc-palette] input')]
                       .filter(i => i.checked).map(i => i.id),
            stored: __md_get('__palette'),
            component: document.querySelectorAll('[data-md-component=palette]').length,
          };
        }"""
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_palette_toggle_switches_and_remembers(browser, server, lang):
    """Clicking the visible toggle goes to slate and shows the other toggle; a reload and another
    page keep slate; clicking again goes back to the light scheme, which a reload keeps too."""
    context, pg = _open(browser)
    try:
        pg.goto(_url(server, lang, "sinusoidal.md"), wait_until="load")
        state = _toggle_state(pg)
        assert state["component"] == 0  # not Material's component
        assert state["scheme"] == "default" and state["stored"] is None, state
        assert state["visible"] == ["__palette_1"] and state["checked"] == ["__palette_0"], state

        pg.click(VISIBLE_TOGGLE)
        state = _toggle_state(pg)
        assert state["scheme"] == "slate", state
        assert state["visible"] == ["__palette_0"] and state["checked"] == ["__palette_1"], state
        assert state["stored"]["index"] == 1, state
        assert state["stored"]["color"]["scheme"] == "slate", state
        # the page's colours follow
        background = pg.evaluate(
            "() => getComputedStyle(document.body).getPropertyValue('--md-default-bg-color')"
        )
        assert background.strip(), background

        pg.wait_for_load_state("networkidle")  # no request cut short by the reload
        pg.reload(wait_until="load")
        state = _toggle_state(pg)
        assert state["scheme"] == "slate" and state["visible"] == ["__palette_0"], state
        assert state["checked"] == ["__palette_1"], state

        pg.wait_for_load_state("networkidle")
        pg.goto(_url(server, lang, "rope.md"), wait_until="load")
        state = _toggle_state(pg)
        assert state["scheme"] == "slate" and state["visible"] == ["__palette_0"], state

        pg.click(VISIBLE_TOGGLE)
        state = _toggle_state(pg)
        assert state["scheme"] == "default" and state["visible"] == ["__palette_1"], state
        assert state["stored"]["index"] == 0, state
        pg.wait_for_load_state("networkidle")  # no request cut short by the reload
        pg.reload(wait_until="load")
        state = _toggle_state(pg)
        assert state["scheme"] == "default" and state["visible"] == ["__palette_1"], state
        pg.wait_for_load_state("networkidle")
        assert not pg.console_errors, pg.console_errors
    finally:
        context.close()


def test_palette_toggle_answers_enter(page, server):
    """With the toggle focused (keyboard), Enter switches the scheme and keeps focus on it."""
    page.goto(_url(server, "en", "sinusoidal.md"), wait_until="load")
    page.focus("#__palette_0")
    page.keyboard.press("Enter")
    assert _scheme(page) == "slate"
    assert page.evaluate("() => document.activeElement.id") == "__palette_1"
    page.keyboard.press("Enter")
    assert _scheme(page) == "default"
    assert page.evaluate("() => document.activeElement.id") == "__palette_0"
    assert not page.console_errors, page.console_errors


# Each lazy block's estimate and its real content height once drawn (content-visibility forced
# to visible; fonts loaded first). contain-intrinsic-size stands for the content box, so the
# real height is measured without padding and border.
LAZY_HEIGHTS = """
async () => {
  await document.fonts.ready;
  const force = document.createElement('style');
  force.textContent = '.md-typeset [data-lazy] { content-visibility: visible !important; }';
  document.head.append(force);
  const rows = [...document.querySelectorAll('[data-lazy]')].map(el => {
    const size = el.style.containIntrinsicSize.match(/auto (\\d+)px/);
    const s = getComputedStyle(el);
    const box = ['paddingTop', 'paddingBottom', 'borderTopWidth', 'borderBottomWidth']
      .reduce((sum, key) => sum + parseFloat(s[key]), 0);
    return {
      estimate: size ? +size[1] : null,
      real: Math.ceil(el.getBoundingClientRect().height - box),
      block: el.tagName.toLowerCase() + '.' + el.className + ' ' +
             el.textContent.trim().slice(0, 40),
    };
  });
  force.remove();
  return rows;
}
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["errata.md", "rope.md", "sinusoidal.md"])
def test_lazy_blocks_are_never_taller_than_their_estimate(browser, server, lang, name):
    context, pg = _open(
        browser, LIGHTHOUSE_PHONE, is_mobile=True, has_touch=True, device_scale_factor=1.75
    )
    try:
        pg.goto(_url(server, lang, name), wait_until="load")
        rows = pg.evaluate(LAZY_HEIGHTS)
        content_visibility = pg.evaluate(
            "() => getComputedStyle(document.querySelector('[data-lazy]')).contentVisibility"
        )
    finally:
        context.close()
    assert len(rows) > 10, rows
    assert content_visibility == "auto"
    assert all(r["estimate"] for r in rows), rows[:3]
    assert sum(r["real"] for r in rows) > 2000  # measured drawn, not as skipped boxes
    under = [r for r in rows if r["real"] > r["estimate"]]
    assert not under, under


def _late_heading(built_site, lang: str, stem: str) -> str:
    folder = built_site.path / ("zh" if lang == "zh" else "") / stem
    html = (folder / "index.html").read_text(encoding="utf-8")
    article = html[html.index('<article class="md-content__inner') :]
    ids = re.findall(r'<h2 id="([^"]+)"', article)
    last = ids[-1]
    # the heading comes after lazy blocks, far down the page
    assert "data-lazy" in article[: article.index(f'<h2 id="{last}"')]
    return last


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["errata.md", "rope.md"])
def test_link_into_the_lazy_part_lands_on_its_heading(browser, server, built_site, lang, name):
    anchor = _late_heading(built_site, lang, name[:-3])
    context, pg = _open(browser, LIGHTHOUSE_PHONE, is_mobile=True, has_touch=True)
    try:
        pg.goto(_url(server, lang, name) + f"#{anchor}", wait_until="load")
        pg.wait_for_timeout(300)  # let the lazy blocks near the heading draw
        where = pg.evaluate(
            """(id) => {
              const r = document.getElementById(id).getBoundingClientRect();
              return {top: r.top, bottom: r.bottom, height: innerHeight, y: scrollY};
            }""",
            anchor,
        )
        assert not pg.console_errors, pg.console_errors
    finally:
        context.close()
    assert where["y"] > 2000, where  # far down the page
    assert 0 <= where["top"] and where["bottom"] <= where["height"], where


def _without_prompts(shown: str) -> str:
    """The statements of a doctest block: prompts dropped, output lines left out."""
    lines = []
    for line in shown.splitlines():
        if line.startswith((">>> ", "... ")) or line in (">>>", "..."):
            lines.append(line[4:])
    return "\n".join(lines)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_copy_button_on_an_api_doctest(browser, server, lang):
    """The build-time copy button of a docstring example on an API page copies its code: no
    prompts, no output."""
    context, pg = _open(browser, permissions=["clipboard-read", "clipboard-write"])
    try:
        pg.goto(_url(server, lang, "api-rope.md"), wait_until="load")
        block = pg.locator("div.highlight[data-copy]").first
        block.scroll_into_view_if_needed()
        shown = block.locator("code").inner_text()
        block.hover()
        block.locator("button.md-code__button[data-clipboard-target]").click()
        copied = pg.evaluate("() => navigator.clipboard.readText()")
        # once the page's scripts ran: still one button per code block (none added at load)
        buttons = pg.evaluate(
            "() => [...document.querySelectorAll('pre:has(> code)')]"
            ".map(pre => pre.querySelectorAll('.md-code__button, .md-clipboard').length)"
        )
        assert not pg.console_errors, pg.console_errors
    finally:
        context.close()
    assert len(buttons) > 10 and set(buttons) == {1}, buttons
    assert shown.startswith(">>> ") and ">>>" not in copied and "\n..." not in copied
    assert copied.strip() == _without_prompts(shown).strip()


# Every change to <html>'s attributes, with the value before and after, and whether the body had
# begun to be parsed (styled elements exist) when it was made. Observed from the document: at
# the time an init script runs there is no <html> element yet.
ROOT_CHANGES = """
window.__rootChanges = [];
window.__tablesMoved = 0;
new MutationObserver(records => {
  for (const r of records) {
    if (r.type === "childList") {
      for (const n of r.removedNodes) if (n.nodeName === "TABLE") window.__tablesMoved++;
    } else if (r.target === document.documentElement)
      window.__rootChanges.push({name: r.attributeName, old: r.oldValue,
        now: r.target.getAttribute(r.attributeName), body: !!document.body});
  }
}).observe(document, {attributes: true, attributeOldValue: true, childList: true, subtree: true});
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_material_changes_nothing_on_html_or_tables_once_the_body_is_drawn(browser, server, lang):
    """overrides/main.html sets in the head what Material's bundle sets on <html> as it starts
    (class js, the focus-visible polyfill's class and attribute): a change there once the body is
    drawn restyles every element (issue 25). The bundle still runs and writes them: it must find
    them as it leaves them. Nor does the bundle move a table into its boxes on load (hooks/tables.py
    writes them): each move styled and laid out the table again."""
    context, pg = _open(browser, LIGHTHOUSE_PHONE, is_mobile=True)
    context.add_init_script(ROOT_CHANGES)
    try:
        pg.goto(_url(server, lang, "errata.md"), wait_until="load")
        changes = pg.evaluate("() => window.__rootChanges")
        moved, tables = pg.evaluate(
            "() => [window.__tablesMoved, document.querySelectorAll("
            "'.md-typeset__scrollwrap > .md-typeset__table > table.posenc-table').length]"
        )
        root = pg.evaluate(
            "() => [document.documentElement.className,"
            " document.documentElement.hasAttribute('data-js-focus-visible')]"
        )
    finally:
        context.close()
    early = [c for c in changes if not c["body"]]
    assert {c["name"] for c in early} >= {"class", "data-js-focus-visible"}, changes
    late = [c for c in changes if c["body"]]
    assert late, changes  # the bundle wrote them again: the observer sees its writes
    assert all(c["old"] == c["now"] for c in late), late
    assert root == ["js js-focus-visible", True], root
    assert tables >= 1 and moved == 0, (tables, moved)
    assert not pg.console_errors, pg.console_errors

"""The interactive explorers (hooks/explorers.py, docs/assets/explorers/) in headless Chromium.

This module holds what every explorer's browser test shares, and the tests of the machinery and
of the two RoPE explorers (rope-scaling, rope-decay); the tests of the others import from here
(``from test_browser_explorers import ...``; their module-scoped ``server``, ``browser`` and
``tab`` fixtures come along with the import).

The helpers:

- ``open_explorer(tab, server, lang, page, name, query="")`` opens a page (``query`` is a
  query string such as ``"?rope-scaling.method=yarn"``), scrolls its explorer into view, waits for
  its script to mount it and returns the explorer's locator;
- ``set_control(box, name, value)`` sets a control as a reader would and fires its events;
- ``shown(box)`` reads every number the explorer shows: each element carrying ``data-k`` (a key)
  and ``data-v`` (the exact float64 values, space-separated, as ``String(x)`` writes them, which
  round-trips) gives ``{key: [values]}`` (several elements under one key are concatenated in
  document order); ``shown_text(box)`` is the readout's text.

Tests compare those numbers with what posenc computes in the test, never with numbers copied
into the page.
"""

from __future__ import annotations

import math

import pytest

from test_browser import DESKTOP, PHONE, _open, _url, chromium, serving

pytestmark = [pytest.mark.site, pytest.mark.browser]

__all__ = [
    "DESKTOP",
    "PHONE",
    "box_height",
    "browser",
    "close",
    "open_explorer",
    "server",
    "set_control",
    "shown",
    "shown_text",
    "tab",
]


@pytest.fixture(scope="module")
def server(built_site):
    yield from serving(built_site)


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


@pytest.fixture(scope="module")
def tab(browser, server):
    """One desktop tab for the whole module: each test opens its page in it."""
    context, pg = _open(browser, DESKTOP)
    yield pg
    context.close()


def open_explorer(pg, server, lang, page, name, query=""):
    """Opens ``page`` (``"rope-scaling.md"``) in ``lang``, scrolls to the explorer ``name`` and
    waits until its script has drawn it; returns the explorer's locator."""
    pg.goto(_url(server, lang, page) + query)
    box = pg.locator(f'section.posenc-explorer[data-explorer="{name}"]')
    box.scroll_into_view_if_needed()
    pg.wait_for_selector(
        f'section.posenc-explorer[data-explorer="{name}"][data-ready]', timeout=10000
    )
    return box


SET = """
(el, value) => {
  el.value = value
  el.dispatchEvent(new Event("input", { bubbles: true }))
  el.dispatchEvent(new Event("change", { bubbles: true }))
  return el.value
}
"""


def set_control(box, name, value):
    """Sets control ``name`` to ``value`` and fires input and change (as a select or a slider
    does); returns the value the control holds afterwards (the explorer may clamp it)."""
    return box.locator(f'form [name="{name}"]').evaluate(SET, str(value))


READ = """
box => {
  const out = {}
  for (const el of box.querySelectorAll("[data-k]")) {
    const values = el.dataset.v === "" ? [] : el.dataset.v.split(" ")
    ;(out[el.dataset.k] ??= []).push(...values)
  }
  return out
}
"""


def shown(box):
    """``{key: [float, ...]}`` of every number the explorer shows (see the module's doc)."""
    return {k: [float(v) for v in vs] for k, vs in box.evaluate(READ).items()}


def shown_text(box):
    return box.locator(".posenc-explorer__readout").inner_text()


def box_height(box):
    return box.evaluate("b => b.getBoundingClientRect().height")


def close(got, want, rel=1e-12, abs_=0.0):
    """Elementwise ``math.isclose``; the failure message names the first pair that differs."""
    got, want = list(got), [float(w) for w in want]
    assert len(got) == len(want), f"{len(got)} numbers shown, {len(want)} expected"
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert math.isclose(g, w, rel_tol=rel, abs_tol=abs_), f"item {k}: shown {g!r}, posenc {w!r}"

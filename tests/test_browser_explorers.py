"""The interactive explorers (hooks/explorers.py, docs/assets/explorers/) in headless Chromium.

This module holds what every explorer's browser test shares, and the tests of the machinery and
of the two RoPE explorers (rope-scaling, rope-decay); the tests of the others import from here
(``from test_browser_explorers import ...``; the module-scoped ``tab`` fixture comes along with
the import, ``server`` and ``browser`` are tests/conftest.py's).

The helpers:

- ``open_explorer(tab, server, lang, page, name, query="")`` opens a page (``query`` is a
  query string such as ``"?rope-scaling.method=yarn"``), scrolls its explorer into view, waits for
  its script to mount it and returns the explorer's locator;
- ``set_control(box, name, value)`` sets a control as a reader would and fires its events;
  ``set_controls(box, {name: value})`` sets several and redraws once;
- ``shown(box)`` reads every number the explorer shows: each element carrying ``data-k`` (a key)
  and ``data-v`` (the exact float64 values, space-separated, as ``String(x)`` writes them, which
  round-trips) gives ``{key: [values]}`` (several elements under one key are concatenated in
  document order); ``shown_text(box)`` is the readout's text.

Tests compare those numbers with what posenc computes in the test, never with numbers copied
into the page.
"""

from __future__ import annotations

import math
from urllib.parse import urlsplit

import numpy as np
import pytest

import posenc
from test_browser import DESKTOP, PHONE, _open, _url

pytestmark = [pytest.mark.site, pytest.mark.browser]

__all__ = [
    "DESKTOP",
    "PHONE",
    "box_height",
    "axe_clean",
    "close",
    "idle",
    "open_explorer",
    "set_control",
    "set_controls",
    "shown",
    "shown_text",
    "tab",
]


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


IDLE = """
box => new Promise((done) => {
  const wait = () => (box.hasAttribute("data-busy") ? setTimeout(wait, 10) : done())
  wait()
})
"""


def idle(box):
    """Waits until the explorer has the data files its settings need and has drawn them
    (hooks/explorer_data.py writes them; the script fetches one when first needed)."""
    box.evaluate(IDLE)


def set_control(box, name, value):
    """Sets control ``name`` to ``value`` and fires input and change (as a select or a slider
    does); returns the value the control holds afterwards (the explorer may clamp it)."""
    out = box.locator(f'form [name="{name}"]').evaluate(SET, str(value))
    idle(box)
    return out


SET_MANY = """
(form, values) => {
  for (const [name, value] of Object.entries(values)) form.elements[name].value = value
  const last = form.elements[Object.keys(values).at(-1)]
  last.dispatchEvent(new Event("change", { bubbles: true }))
  return Object.fromEntries(Object.keys(values).map((name) => [name, form.elements[name].value]))
}
"""


def set_controls(box, values):
    """Sets several controls at once and fires one change (one redraw); returns what each
    control holds afterwards."""
    out = box.locator("form").evaluate(SET_MANY, {k: str(v) for k, v in values.items()})
    idle(box)
    return out


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


# --- the machinery, on the two RoPE explorers ------------------------------------------------

MINE = [("rope-scaling.md", "rope-scaling"), ("rope.md", "rope-decay")]


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize(("page_md", "name"), MINE)
def test_explorer_loads_near_the_viewport_and_moves_nothing(
    browser, server, page_md, name, viewport
):
    """The script is not fetched with the page, only when the box nears the viewport; the box
    keeps the height it had before the script ran; no request leaves the site."""
    size, extra = (
        (DESKTOP, {}) if viewport == "desktop" else (PHONE, {"is_mobile": True, "has_touch": True})
    )
    context, pg = _open(browser, size, **extra)
    try:
        pg.goto(_url(server, "en", page_md))
        box = pg.locator(f'section.posenc-explorer[data-explorer="{name}"]')
        # neither script nor data (only the stylesheet, which sizes the box)
        assert not [u for u in pg.requests if "/explorers/" in u and not u.endswith(".css")]
        before = box_height(box)
        box.scroll_into_view_if_needed()
        pg.wait_for_selector(f'[data-explorer="{name}"][data-ready]', timeout=10000)
        pg.wait_for_timeout(100)
        assert abs(box_height(box) - before) <= 1, (before, box_height(box))
        assert any(u.endswith(f"/explorers/{name}.js") for u in pg.requests)
        if name == "rope-scaling":  # its numbers: posenc's, computed at build time
            assert any("/explorers/data/rope-scaling/" in u for u in pg.requests), pg.requests
        assert all(u.startswith((server, "data:")) for u in pg.requests), pg.requests
        assert not pg.console_errors, pg.console_errors
        width = pg.evaluate("document.documentElement.clientWidth")
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), "the explorer overflows"
        assert box.bounding_box()["width"] <= width
        if viewport == "phone":
            box.locator("summary").click()  # the table of values too
            axe_clean(pg, box)
    finally:
        context.close()


AXE_BOX = """
async ([box, scheme, colourRules]) => {
  document.body.setAttribute("data-md-color-scheme", scheme)
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))
  const options = scheme === "default" ? {} : { runOnly: { type: "rule", values: colourRules } }
  const result = await axe.run(box, { resultTypes: ["violations"], ...options })
  return result.violations.map((v) => ({ id: v.id, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }))
}
"""


def axe_clean(pg, box):
    """axe-core finds nothing in the drawn explorer, light (every rule) and dark (the colour
    rules), as tests/test_a11y.py runs it on whole pages."""
    from test_a11y import AXE, COLOUR_RULES

    pg.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    pg.add_script_tag(path=str(AXE))
    handle = box.element_handle()
    for scheme in ("default", "slate"):
        violations = pg.evaluate(AXE_BOX, [handle, scheme, COLOUR_RULES])
        assert not violations, (scheme, violations)


def test_settings_survive_the_url_and_the_language_switch(tab, server):
    box = open_explorer(tab, server, "en", "rope-scaling.md", "rope-scaling")
    set_control(box, "method", "llama3")
    set_control(box, "factor", "16")
    tab.wait_for_timeout(100)  # the URL is written on the next frame
    query = tab.evaluate("location.search")
    assert "rope-scaling.method=llama3" in query and "rope-scaling.factor=16" in query, query
    en = shown(box)
    link = tab.locator("a.md-select__link[hreflang=zh]").first
    link.dispatch_event("pointerdown")  # the language menu's link takes the query along
    assert urlsplit(link.evaluate("a => a.href")).query == query.lstrip("?")
    box = open_explorer(tab, server, "zh", "rope-scaling.md", "rope-scaling", query)
    assert box.locator('[name="method"]').input_value() == "llama3"
    assert box.locator('[name="factor"]').input_value() == "16"
    assert shown(box) == en
    assert "训练长度" in box.inner_text() and "内插" in shown_text(box)
    # a value outside the control's range is ignored
    box = open_explorer(
        tab, server, "en", "rope-scaling.md", "rope-scaling", "?rope-scaling.factor=999"
    )
    assert box.locator('[name="factor"]').input_value() == "8"


def test_a_data_file_is_fetched_when_a_setting_first_needs_it(tab, server):
    """The numbers of a setting come in a file per method, base, dimension and trained length:
    changing the factor or the current length fetches nothing, another method fetches its file
    once, and going back to a setting seen before fetches nothing again."""
    box = open_explorer(tab, server, "en", "rope-scaling.md", "rope-scaling")
    data = lambda: [u for u in tab.requests if "/explorers/data/" in u]  # noqa: E731
    before = len(data())
    assert before >= 1
    set_controls(box, {"factor": 16, "current": "double"})
    assert len(data()) == before
    set_control(box, "method", "llama3")
    assert len(data()) == before + 1 and data()[-1].endswith("/llama3-10000-128-4096.json")
    set_control(box, "method", "yarn")
    assert len(data()) == before + 1
    assert box.get_attribute("data-busy") is None


def test_keyboard_and_dark_scheme(tab, server):
    box = open_explorer(tab, server, "en", "rope-scaling.md", "rope-scaling")
    factor = box.locator('[name="factor"]')
    factor.focus()
    tab.keyboard.press("ArrowDown")  # 8 -> 12, the next factor offered
    assert factor.input_value() == "12"
    idle(box)
    assert shown(box)["attention"][0] == pytest.approx(0.1 * np.log(12) + 1, rel=1e-12)
    method = box.locator('[name="method"]')
    method.focus()
    tab.keyboard.press("ArrowUp")  # yarn -> dynamic: its numbers are another file
    assert method.input_value() == "dynamic"
    idle(box)
    assert "base_scaled" in shown(box)
    stroke = "s => getComputedStyle(s).stroke"
    light = box.locator("path.pe-s1").first.evaluate(stroke)
    tab.evaluate("document.body.setAttribute('data-md-color-scheme', 'slate')")
    assert box.locator("path.pe-s1").first.evaluate(stroke) != light


# --- explorer 1: RoPE frequencies under scaling ------------------------------------------------

SCALING_GRID = [  # dim, base, trained length, factor, current length
    (128, "10000", 4096, 8, "scaled"),
    (64, "500000", 8192, 4, "double"),
    (32, "1000000", 2048, 64, "half"),
    (256, "10000", 32768, 3, "trained"),
    (128, "500000", 2048, 1, "scaled"),
]
LENGTH = {"half": 0.5, "trained": 1, "double": 2}


def longrope_factors(d, s):
    """The explorer's made-up LongRoPE factors, as the rope-scaling page states the rule."""
    u = np.arange(d // 2) / (d // 2 - 1)
    short = np.interp(u, [0, 1], [1.0, 1.25])
    long = np.maximum(1.0, np.interp(u, [0, 16 / 63, 40 / 63, 1], [1.0, 1.2, 0.75 * s, 1.25 * s]))
    return short.tolist(), long.tolist()


def posenc_scaling(method, d, b, L0, s, L):
    """(inv_freq, attention factor) from posenc for the explorer's settings."""
    keys = {"factor": float(s), "original_max_position_embeddings": L0}
    if method == "none":
        return posenc.rope_frequencies(d, base=b)
    if method == "ntk":
        return posenc.rope_frequencies(d, base=b * s ** (d / (d - 2)))
    if method == "linear":
        return posenc.rope_frequencies(
            d, base=b, scaling={"rope_type": "linear", "factor": float(s)}
        )
    if method == "llama3":
        keys |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
    if method == "longrope":
        short, long = longrope_factors(d, s)
        keys |= {"short_factor": short, "long_factor": long}
    return posenc.rope_frequencies(d, base=b, scaling={"rope_type": method, **keys}, seq_len=L)


METHODS = ["none", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"]


def test_rope_scaling_shows_posenc_numbers(tab, server):
    """Every method over a grid of settings: the wavelengths, slow-downs, attention factor, pair
    classes, ramp, bases and counts shown are posenc's; and the page's claims about them."""
    box = open_explorer(tab, server, "en", "rope-scaling.md", "rope-scaling")
    box.locator("summary").click()  # the table of values (γ)
    for method in METHODS:
        for d, base, L0, s, length in SCALING_GRID:
            settings = {
                "method": method,
                "dim": d,
                "base": base,
                "trained": L0,
                "factor": s,
                "current": length,
            }
            assert set_controls(box, settings) == {k: str(v) for k, v in settings.items()}
            check_scaling(shown(box), method, d, float(base), L0, s, length)
    lows = []  # the page: a larger L0 moves YaRN's ramp towards slower pairs
    for L0 in (2048, 4096, 32768):
        set_controls(
            box, {"method": "yarn", "dim": 128, "base": "10000", "factor": 8, "trained": L0}
        )
        lows.append(shown(box)["ramp_lo"][0])
    assert lows == sorted(lows) and lows[0] < lows[-1], lows


def check_scaling(got, method, d, b, L0, s, length):
    L = s * L0 if length == "scaled" else int(LENGTH[length] * L0)
    where = f"{method} d={d} b={b} L0={L0} s={s} L={L}"
    plain, _ = posenc.rope_frequencies(d, base=b)
    inv, attention = posenc_scaling(method, d, b, L0, s, L)
    close(got["wave_plain"], 2 * np.pi / plain)
    close(got["wave_scaled"], 2 * np.pi / inv)
    close(got["slow"], plain / inv)
    assert got.get("attention", [1.0])[0] == pytest.approx(attention, rel=1e-12), where
    if "attention" in got:
        assert got["attention2"][0] == pytest.approx(attention**2, rel=1e-12)
    seen = 2 * np.pi / plain <= L0
    inside = ~seen & (L * inv <= L0 * plain * (1 + 1e-9))
    counts = [got[k][0] for k in ("n_seen", "n_inside", "n_beyond")]
    assert counts == [seen.sum(), inside.sum(), (~seen & ~inside).sum()], where
    assert got["length"] == [L]
    if method in ("ntk", "dynamic"):  # the base the ladder uses: inv[1] = b' ** (-2/d)
        assert got["base_scaled"][0] == pytest.approx(inv[1] ** (-d / 2), rel=1e-9), where
    if method == "linear" and length == "scaled":
        assert got["n_beyond"] == [0]  # the page: no pair extrapolates at L = s·L0
    if method == "dynamic" and length in ("half", "trained"):
        close(got["wave_scaled"], got["wave_plain"])  # the page: plain RoPE up to L0
    if method == "yarn" and s > 1:
        gamma = 1 - (1 - inv / plain) / (1 - 1 / s)
        close(got["gamma"], gamma, rel=0, abs_=1e-9)
        lo, hi = got["ramp_lo"][0], got["ramp_hi"][0]
        before, after = gamma[: int(lo) + 1], gamma[int(np.ceil(hi)) :]
        assert np.allclose(before, 1, rtol=0, atol=1e-12), where
        assert np.allclose(after, 0, rtol=0, atol=1e-12), where
        assert seen[: int(lo) + 1].all(), (
            where
        )  # the page: the pairs before the ramp turned full circles
    if method == "llama3":
        wave = 2 * np.pi / plain
        kept, divided = wave < L0 / 4, wave > L0
        assert [got[k][0] for k in ("kept", "divided", "blended")] == [
            kept.sum(),
            divided.sum(),
            (~kept & ~divided).sum(),
        ]
        assert (inv[kept] == plain[kept]).all() and np.allclose(
            inv[divided], plain[divided] / s, rtol=1e-15
        )
    if method == "longrope":
        short, long = longrope_factors(d, s)
        assert got["factor_last"][0] == pytest.approx((long if L > L0 else short)[-1], rel=1e-12)


def test_rope_scaling_longrope_factors_are_the_figures_at_d128_s8():
    """The page: at d = 128 and s = 8 the explorer's long factors are those of its figure."""
    _, long = longrope_factors(128, 8.0)
    figure = np.interp(np.arange(64), [0, 16, 40, 63], [1.0, 1.2, 6.0, 10.0])
    assert np.allclose(long, figure, rtol=1e-13)


# --- explorer 2: long-range decay --------------------------------------------------------------

DECAY_GRID = [  # base, dim, pairing, q = k, distances up to, key position n, probe r
    ("10000", "128", "interleaved", "ones", "128", 0, 11),
    ("10000", "64", "half", "alternate", "1024", 1000, 300),
    ("500000", "32", "interleaved", "front", "32768", 999983, 20000),
    ("100", "16", "half", "front", "128", 77, 5),
    ("1000000", "256", "half", "ones", "32768", 123456, 32768),
]


def decay_vector(kind, d):
    j = np.arange(d)
    return {"ones": np.ones(d), "alternate": (j % 2 == 0) * 1.0, "front": (j < d // 2) * 1.0}[kind]


def posenc_scores(q, rs, n, base, pairing):
    """q at n + r against k = q at n, for every r: the dot products of posenc.apply_rope."""
    x = np.broadcast_to(q, (len(rs), 2, q.size))
    positions = np.stack([np.asarray(rs) + n, np.full(len(rs), n)], axis=-1)
    out = posenc.apply_rope(x, positions, base=base, pairing=pairing)
    return np.sum(out[:, 0] * out[:, 1], axis=-1)


def roformer_bound(q, rs, base, pairing):
    d = q.size
    pairs = (q[0::2], q[1::2]) if pairing == "interleaved" else (q[: d // 2], q[d // 2 :])
    h = np.append(pairs[0] ** 2 + pairs[1] ** 2, 0)
    theta, _ = posenc.rope_frequencies(d, base=base)
    S = np.cumsum(np.exp(1j * np.asarray(rs, dtype=float)[:, None] * theta), axis=1)
    return np.abs(np.diff(h)).max() * np.abs(S).sum(axis=1), h[:-1]


def test_rope_decay_shows_posenc_numbers(tab, server):
    box = open_explorer(tab, server, "en", "rope.md", "rope-decay")
    box.locator("summary").click()
    for base, dim, pairing, vec, R, n, probe in DECAY_GRID:
        settings = {
            "base": base,
            "dim": dim,
            "pairing": pairing,
            "vector": vec,
            "range": R,
            "key": n,
            "probe": probe,
        }
        assert set_controls(box, settings) == {k: str(v) for k, v in settings.items()}
        got = shown(box)
        rs = np.array(
            box.locator('path[data-k="score"]').get_attribute("data-x").split(), dtype=np.int64
        )
        assert rs[0] == 0 and rs[-1] == int(R) and (np.diff(rs) > 0).all()
        if int(R) <= 1024:
            assert len(rs) == int(R) + 1
        d, b = int(dim), float(base)
        q = decay_vector(vec, d)
        qq = float(q @ q)
        at0 = posenc_scores(q, rs, 0, b, pairing)
        atn = posenc_scores(q, rs, n, b, pairing)
        close(got["score"], at0 / qq, rel=0, abs_=1e-9)
        close(got["score_shifted"], atn / qq, rel=0, abs_=1e-9)
        assert np.abs(atn - at0).max() <= 1e-8 * qq  # relative position, by posenc itself
        assert 0 <= got["diff"][0] <= 1e-8 * qq
        bound, h = roformer_bound(q, rs, b, pairing)
        close(got["bound"], bound, rel=1e-9)
        assert (np.abs(at0) <= bound + 1e-9).all()
        assert got["qq"] == [qq] and got["key"] == [n] and got["count"] == [len(rs)]
        assert got["probe_score"][0] == pytest.approx(
            posenc_scores(q, [probe], 0, b, pairing)[0], abs=1e-9 * qq
        )
        assert got["probe_bound"][0] == pytest.approx(
            roformer_bound(q, [probe], b, pairing)[0][0], rel=1e-9
        )
        close(got["h"], h)
        theta, _ = posenc.rope_frequencies(d, base=b)
        close(got["term"], h * np.cos(probe * theta), rel=0, abs_=1e-9)

    # the page: with a larger base the score first drops below half of q·q at a larger r
    first = []
    for base in ("10000", "500000"):
        set_controls(
            box,
            {"dim": 128, "pairing": "interleaved", "vector": "ones", "range": 1024, "base": base},
        )
        score = np.array(shown(box)["score"])
        first.append(int(np.argmax(score < 0.5)))
        assert posenc_scores(np.ones(128), [first[-1]], 0, float(base), "interleaved")[0] < 64
    assert 0 < first[0] < first[1], first

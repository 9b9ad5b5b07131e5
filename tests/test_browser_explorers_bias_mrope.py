"""The bias explorer (alibi, t5-bias) and the M-RoPE explorer (mrope) in headless Chromium.

Each test drives the explorer's controls over a grid of settings and compares every number it
shows (``data-k`` / ``data-v``, read by ``shown``) with what posenc computes here, in the test:
ALiBi slopes and biases exactly (float64, every head count of the grid, powers of two or not),
T5 buckets exactly (for every relative position the page can show), M-RoPE ids exactly (every
token). The shared fixtures and helpers are tests/test_browser_explorers.py's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from test_browser import _url
from test_browser_explorers import (
    PHONE,
    _open,
    idle,
    open_explorer,
    set_control,
    shown,
    shown_text,
    tab,
)

# test_browser_explorers.py's fixtures, found by pytest under these names in this module
FIXTURES = (tab,)  # server and browser: tests/conftest.py

pytestmark = [pytest.mark.site, pytest.mark.browser]


SET_ALL = """
(form, values) => {
  let last = null
  for (const [name, value] of Object.entries(values)) {
    last = form.elements[name]
    last.value = value
  }
  last.dispatchEvent(new Event("change", { bubbles: true }))
  return Object.fromEntries(Object.keys(values).map((name) => [name, form.elements[name].value]))
}
"""


FITS = """
b => {
  const r = b.querySelector('.posenc-explorer__readout')
  return Math.abs(r.getBoundingClientRect().height - parseFloat(getComputedStyle(r).minHeight)) < 0.5
}
"""


def _opened(tab, server, lang, page, name, query=""):
    """``open_explorer``, and the readout of the first settings within the lines the page
    reserved for it (else drawing it would move what follows)."""
    box = open_explorer(tab, server, lang, page, name, query)
    assert box.evaluate(FITS), f"{page}{query}: the readout outgrows its reserved lines"
    return box


def _set(box, **values):
    """Sets several controls at once, then fires one change (one redraw): cheaper than
    ``set_control`` per control. The explorer may clamp a value; the test asks for none."""
    want = {k: str(v) for k, v in values.items()}
    got = box.locator("form").evaluate(SET_ALL, want)
    idle(box)
    assert got == want


def test_alibi_numbers_are_posencs(tab, server):
    box = _opened(tab, server, "en", "alibi.md", "bias")
    for heads, tokens, causal in [
        (8, 16, True),
        (6, 16, False),
        (12, 32, True),
        (37, 64, False),
        (64, 16, True),
    ]:
        _set(box, heads=heads, tokens=tokens, direction="causal" if causal else "bidirectional")
        slopes = posenc.alibi_slopes(heads)
        bias = posenc.alibi_bias(tokens, tokens, heads, causal=causal)
        for h, qi, kj in [(0, tokens - 1, 0), (heads - 1, tokens // 2, tokens // 2 + 1)]:
            _set(box, head=h, qi=qi, kj=kj)
            got = shown(box)
            where = f"heads={heads} tokens={tokens} causal={causal} head={h} i={qi} j={kj}"
            assert got["slopes"] == slopes.tolist(), where  # exact: float64 to the last bit
            assert got["slope"] == [slopes[h]], where
            assert math.isclose(got["log2"][0], math.log2(slopes[h]), rel_tol=1e-15), where
            assert got["bias"] == [bias[h, qi, kj]], where
            assert got["row"] == bias[h, qi].tolist(), where
            assert got["far"] == [bias[h, tokens - 1, 0]], where
            if causal and kj > qi:
                assert "masked" in shown_text(box), where


def test_alibi_head_stays_within_the_heads(tab, server):
    box = _opened(tab, server, "en", "alibi.md", "bias")
    _set(box, heads=20)
    _set(box, head=19)
    assert set_control(box, "heads", 5) == "5"
    assert box.locator('[name="head"]').input_value() == "4"
    assert shown(box)["slope"] == [posenc.alibi_slopes(5)[4]]


def _t5_reference(tokens, bidirectional, buckets, max_distance):
    rel = np.arange(-(tokens - 1), tokens)
    return rel, posenc.t5_bucket(
        rel, bidirectional=bidirectional, num_buckets=buckets, max_distance=max_distance
    )


def test_t5_buckets_are_posencs(tab, server):
    box = _opened(tab, server, "en", "t5-bias.md", "bias")
    assert box.locator('[name="scheme"]').input_value() == "t5"  # the page's own defaults
    for tokens, bidirectional, buckets, max_distance in [
        (256, True, 32, 128),
        (256, False, 32, 128),
        (128, True, 18, 64),
        (64, False, 18, 16),
        (256, True, 64, 512),
        (32, False, 7, 16),
        (128, True, 5, 16),
        (64, False, 64, 32),  # refused: 32 exact buckets, max_distance 32
        (64, True, 64, 16),  # refused: 16 exact buckets, max_distance 16
    ]:
        direction = "bidirectional" if bidirectional else "causal"
        _set(box, tokens=tokens, direction=direction, buckets=buckets, maxdist=max_distance)
        qi, kj = tokens // 2, tokens // 2 - 3
        _set(box, qi=qi, kj=kj)
        where = f"tokens={tokens} {direction} buckets={buckets} max_distance={max_distance}"
        got = shown(box)
        try:
            rel, want = _t5_reference(tokens, bidirectional, buckets, max_distance)
        except ValueError:  # posenc refuses it: so does the explorer, and shows no bucket
            assert "buckets" not in got and "bucket" not in got, where
            assert "refuses" in shown_text(box), where
            continue
        assert got["buckets"] == want.tolist(), where
        assert got["rel"] == [kj - qi] and got["bucket"] == [want[kj - qi + tokens - 1]], where
        row = [
            -math.inf if not bidirectional and j > qi else float(want[j - qi + tokens - 1])
            for j in range(tokens)
        ]
        assert got["row"] == row, where
        # the first distance of the last bucket of the past, found with posenc itself
        n = buckets // 2 if bidirectional else buckets
        far = -np.arange(0, 4 * max_distance)
        b = posenc.t5_bucket(
            far, bidirectional=bidirectional, num_buckets=buckets, max_distance=max_distance
        )
        assert got["far"] == [float(np.argmax(b == n - 1))] and got["last"] == [n - 1], where


def _mrope_reference(v):
    before, between, after = v["before"], v["between"], v["after"]
    layout = [("text", before), ("image", (1, v["imgh"], v["imgw"])), ("text", between)]
    kwargs = {}
    if v["model"] == "Qwen3-VL":
        for _ in range(v["frames"]):
            layout += [("text", v["stamp"]), ("video", (1, v["vidh"], v["vidw"]))]
    elif v["model"] == "Qwen2.5-VL":
        # the processor stores seconds_per_grid in float32 (0.5, 1, 2 are exact there)
        layout.append(("video", (v["frames"], v["vidh"], v["vidw"]), float(v["seconds"])))
        kwargs["tokens_per_second"] = int(v["tps"])
    else:
        layout.append(("video", (v["frames"], v["vidh"], v["vidw"])))
    layout.append(("text", after))
    ids = posenc.mrope_position_ids(
        [layout], spatial_merge_size=int(v["merge"]), resume=v["resume"], **kwargs
    )[:, 0]
    return ids


def _axes_of(section, interleaved, d=128):
    # token a has id 1 on axis a only: the pairs it turns are axis a's (as on the mrope page)
    out = posenc.apply_mrope(
        np.ones((3, d)), np.eye(3, dtype=np.int64), section, interleaved=interleaved
    )
    return np.argmax(out[:, : d // 2] != 1, axis=0).tolist()


MROPE_KEYS = (
    "model",
    "resume",
    "merge",
    "before",
    "imgh",
    "imgw",
    "between",
    "frames",
    "vidh",
    "vidw",
    "seconds",
    "tps",
    "stamp",
    "after",
)
MROPE_GRID = [
    dict(zip(MROPE_KEYS, row, strict=True))
    for row in [
        ("Qwen2-VL", "max", 2, 2, 4, 6, 2, 3, 4, 4, "0.5", "4", 2, 2),
        ("Qwen2-VL", "spatial", 2, 1, 16, 2, 3, 8, 2, 4, "0.5", "4", 2, 1),
        ("Qwen2.5-VL", "max", 2, 3, 6, 8, 1, 5, 4, 4, "0.5", "4", 2, 2),
        ("Qwen2.5-VL", "spatial", 1, 2, 2, 4, 2, 4, 2, 2, "2", "1", 2, 3),
        ("Qwen2.5-VL", "max", 1, 1, 8, 8, 1, 7, 4, 2, "1", "2", 2, 1),
        ("Qwen3-VL", "max", 2, 2, 4, 6, 2, 3, 4, 4, "0.5", "4", 3, 2),
        ("Qwen3-VL", "spatial", 1, 4, 6, 2, 1, 8, 8, 6, "0.5", "4", 1, 5),
    ]
]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mrope_ids_are_posencs(tab, server, lang):
    box = _opened(tab, server, lang, "mrope.md", "mrope")
    bands, inter = _axes_of([16, 24, 24], False), _axes_of([24, 20, 20], True)
    grid = MROPE_GRID if lang == "en" else MROPE_GRID[1::4]
    for v in grid:
        _set(box, **v)
        ids = _mrope_reference(v)
        got = shown(box)
        assert got["t"] == ids[0].tolist(), v
        assert got["h"] == ids[1].tolist(), v
        assert got["w"] == ids[2].tolist(), v
        assert got["next"] == [int(ids.max()) + 1], v
        assert got["tokens"] == [ids.shape[1]], v
        m = int(v["merge"])
        image = (v["imgh"] // m) * (v["imgw"] // m)
        start = v["before"]
        assert got["image_tokens"] == [image], v
        assert got["after_image"] == [ids[0, start + image]], v
        assert got["image_max"] == [ids[:, start : start + image].max()], v
        assert got["moved"] == [ids[0, start + image] - ids[0, start]], v
        assert got["after_video"] == [ids[0, -v["after"]]], v
        assert got["axes"] == (inter if v["model"] == "Qwen3-VL" else bands), v


def test_settings_travel_in_the_url_and_the_keyboard_drives_them(tab, server):
    box = _opened(tab, server, "zh", "alibi.md", "bias", "?bias.heads=12&bias.head=9")
    assert shown(box)["slope"] == [posenc.alibi_slopes(12)[9]]
    assert "个" in shown_text(box)  # the Chinese readout
    box.locator('[name="head"]').focus()
    tab.keyboard.press("ArrowUp")
    idle(box)
    assert shown(box)["slope"] == [posenc.alibi_slopes(12)[10]]
    tab.wait_for_function("() => location.search.includes('bias.head=10')")
    box = _opened(tab, server, "en", "mrope.md", "mrope")
    _set(box, model="Qwen3-VL", frames=5)
    tab.wait_for_function(
        "() => location.search.includes('mrope.model=Qwen3-VL') &&"
        " location.search.includes('mrope.frames=5')"
    )
    url = tab.url
    box = _opened(tab, server, "en", "mrope.md", "mrope", url[url.index("?") :])
    assert box.locator('[name="model"]').input_value() == "Qwen3-VL"
    v = {**MROPE_GRID[0], "model": "Qwen3-VL", "frames": 5}
    assert shown(box)["t"] == _mrope_reference(v)[0].tolist()


HEIGHT = "b => Math.round(b.getBoundingClientRect().height)"
AXE_BOX = """
async ([selector, scheme, rules]) => {
  document.body.setAttribute('data-md-color-scheme', scheme)
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))
  const options = rules.length ? {runOnly: {type: 'rule', values: rules}} : {}
  const result = await axe.run(document.querySelector(selector), {resultTypes: ['violations'], ...options})
  return result.violations.map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')))
}
"""


@pytest.mark.parametrize(
    ("lang", "page", "name", "query", "schemes"),
    [
        ("zh", "t5-bias.md", "bias", "?bias.direction=causal", ("default", "slate")),
        ("en", "mrope.md", "mrope", "", ("default",)),  # the same colours as the other
    ],
)
def test_on_a_phone_drawing_moves_nothing_and_axe_passes(
    browser, server, lang, page, name, query, schemes
):
    """On a phone (390 px): the box is as tall before its script runs (the explorer is screens
    below the top, so its script has not been asked for) as after it has drawn, and nothing is
    wider than the screen; axe-core finds nothing in the explorer as drawn, its table of values
    open, light (every rule) and, for the bias explorer, dark (the colour rules; the explorers
    share their colours, and each axe run reads the whole page, about 4 s here). test_browser_phone.py runs axe on the
    pages before any explorer is drawn."""
    from test_a11y import AXE, COLOUR_RULES

    context, pg = _open(browser, PHONE, is_mobile=True)
    try:
        pg.goto(_url(server, lang, page) + query)
        selector = f'section.posenc-explorer[data-explorer="{name}"]'
        box = pg.locator(selector)
        assert box.get_attribute("data-ready") is None, "drawn before it came near the screen"
        before = box.evaluate(HEIGHT)
        box.scroll_into_view_if_needed()
        pg.wait_for_selector(f"{selector}[data-ready]", timeout=10000)
        assert box.evaluate(HEIGHT) == before
        assert pg.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        box.locator("summary").click()
        pg.wait_for_selector(f"{selector} .posenc-explorer__table table")
        pg.add_script_tag(path=str(AXE))
        for scheme in schemes:
            rules = [] if scheme == "default" else COLOUR_RULES
            assert pg.evaluate(AXE_BOX, [selector, scheme, rules]) == [], scheme
        assert not pg.console_errors, pg.console_errors
    finally:
        context.close()

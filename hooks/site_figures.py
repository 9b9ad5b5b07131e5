"""Figures for the site, drawn at build time from posenc (matplotlib is imported lazily).

Part of the site's build code, not of the package (until 0.1 it was ``posenc.plots``):
hooks/figures.py puts this folder on ``sys.path`` for the build, and the test suite does too.
A page draws a figure with matplotlib in an ``exec="on" html="1"`` code block and prints
``site_figures.to_html(fig)``: the figure goes into the page as inline SVG, so it needs no
image file and no request. Both languages run the same code; each language's figure is drawn by
matplotlib with that language's words, so it is laid out for them. The words come from a
strings table, ``words({"en": {...}, "zh": {...}})``, which gives the strings of the language
of the page being built (the build hook names the page; the code is the same in both
languages). Words a block gives in English only are looked up in site_figures_zh's table of the
glossary's Chinese before the Chinese figure is drawn. Text stays SVG text
(``svg.fonttype: none``) and the reader's own fonts draw it; a CJK font installed here is used
to measure Chinese words for the layout. The background is transparent and black and the
default colour cycle become CSS (``currentColor``, ``var(--posenc-c0)``...), so one SVG suits
the light and the dark scheme.
"""

from __future__ import annotations

import io
import itertools
import re
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["figure", "page_language", "to_html", "words"]

_ids = itertools.count(1)

# The build hook names the page being rendered (None outside a build): its language picks the
# words, and the page and the code block that drew a figure key the figure in the store.
_calls: dict = {}
_page: list[str | None] = [None]
_webps: dict[str, str] = {}  # embedded PNG -> its WebP form
# Across builds the site's hook may lend a store (``get(key)`` / ``put(key, value)``) whose keys
# it salts with everything a drawing depends on (this package's source, the library versions,
# the page's code): an unchanged figure is then not drawn again. None: no store.
_store: list[Any] = [None]

# matplotlib's default cycle (tab10) -> CSS variables set per colour scheme in posenc.css
_CYCLE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
MIN_FONT_PT = 9.0  # no text smaller than this (the figure is never shown below 1:1.2)
# A figure wider than this (inches) is drawn a second time for phones, this wide with its panels
# one under the other (issue 23): 4 in is 384 CSS px, so on a 360 px phone's 328 px column its
# 9 pt text still shows at 10 px. The page shows one of the two (posenc.css).
NARROW_WIDTH = 4.0


def _code_key(code):  # type: ignore[no-untyped-def]
    """What a code object computes, without its file name or the addresses of nested code."""
    consts = tuple(_code_key(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts)
    return (code.co_code, consts, code.co_names)


def _set_page(src_uri: str | None) -> None:
    """Called by the site's build hook: the page whose code blocks run next (None: no caching)."""
    _page[0] = src_uri
    if src_uri is None:
        _calls.clear()
        _webps.clear()


def page_language() -> str:
    """The language of the site page being built: ``"zh"`` on a Chinese page, else ``"en"``.

    Code blocks are the same in both languages; a block that prints words (a table header) picks
    them with this."""
    page = _page[0] or ""
    return "zh" if page.startswith("zh/") else "en"


_language = page_language
LANGUAGES = ("en", "zh")


def words(table: Mapping[str, Mapping[str, str]]) -> Mapping[str, str]:
    """A figure's strings in the language of the page being built (``"en"`` outside a build).

    ``table`` maps each language of the site (``"en"``, ``"zh"``) to the figure's strings,
    under the same keys in both::

        w = words({"en": {"x": "position $p$"}, "zh": {"x": "位置 $p$"}})
        ax.set_xlabel(w["x"])

    Chinese words follow docs/zh/glossary.md; math in a Chinese string is written as Unicode
    text when drawn (mathtext draws no CJK).

    Raises
    ------
    TypeError
        ``table`` or one of its values is not a mapping, or a string is not a ``str``.
    ValueError
        ``table`` does not hold exactly the site's languages, or its languages' keys differ.
    """
    if not isinstance(table, Mapping):
        raise TypeError(
            f"table must be a mapping of language to strings, got {type(table).__name__}"
        )
    if set(table) != set(LANGUAGES):
        raise ValueError(
            f"table must have the languages {list(LANGUAGES)}, got {sorted(map(str, table))}"
        )
    keys = None
    for lang in LANGUAGES:
        strings = table[lang]
        if not isinstance(strings, Mapping):
            raise TypeError(f"table[{lang!r}] must be a mapping, got {type(strings).__name__}")
        bad = [k for k, v in strings.items() if not isinstance(v, str)]
        if bad:
            raise TypeError(
                f"table[{lang!r}][{bad[0]!r}] must be a str, got {type(strings[bad[0]]).__name__}"
            )
        if keys is not None and set(strings) != keys:
            raise ValueError(
                f"table[{lang!r}] must have the keys of table['en'] {sorted(keys)}, "
                f"got {sorted(strings)}"
            )
        keys = set(strings)
    return table[page_language()]


def figure(width: float = 6.4, height: float = 3.2, **kwargs: Any) -> Any:
    """A new matplotlib figure on the headless Agg backend: ``fig, ax = figure()``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # a fixed salt keeps the SVG deterministic; to_html makes ids unique per figure
    plt.rcParams.update(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "posenc",
            "font.size": 10,
            "savefig.transparent": True,
            "font.family": ["DejaVu Sans", *_cjk_fonts()],
        }
    )
    return plt.subplots(figsize=(width, height), layout="constrained", **kwargs)


_CJK_WANTED = ("Noto Sans CJK SC", "Noto Serif CJK SC", "WenQuanYi Zen Hei")
_CJK_FILES = ("NotoSansCJK", "NotoSerifCJK", "wqy-zenhei")  # their files' names
_cjk_found: list[list[str]] = []


def _cjk_fonts() -> list[str]:
    """A CJK font installed here, if any: only used to measure Chinese labels for the layout.

    matplotlib knows the fonts its cache listed when it was built: a font installed after that
    (fonts-noto-cjk on a machine that ran matplotlib before) is not in it. So the system's font
    folders are looked at too and such a font is added: what is installed decides the layout,
    not the state of a user's cache."""
    if _cjk_found:
        return _cjk_found[0]
    from matplotlib import font_manager

    def known() -> list[str]:
        names = {f.name for f in font_manager.fontManager.ttflist}
        return [n for n in _CJK_WANTED if n in names][:1]

    found = known()
    if not found:
        files = font_manager.findSystemFonts()  # .ttf, .otf and .ttc
        for path in sorted(p for p in files if Path(p).name.startswith(_CJK_FILES)):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read
                continue
        found = known()
    _cjk_found.append(found)
    return found


def _texts(fig: Any) -> list[Any]:
    """The figure's words: titles, axis labels, text, annotations and legends (not tick labels,
    which are numbers; ``fig.findobj`` finds the same but walks every artist, seconds per build)."""
    out = list(fig.texts)
    legends = list(fig.legends)
    for ax in fig.axes:
        out += [
            ax.title,
            ax._left_title,
            ax._right_title,
            ax.xaxis.label,
            ax.yaxis.label,
            *ax.texts,
        ]
        legends.append(ax.get_legend())
    for legend in legends:
        if legend is not None:
            out += [*legend.get_texts(), legend.get_title()]
    return [t for t in out if t.get_text()]


def _min_size(texts: list[Any]) -> None:
    for t in texts:
        if t.get_fontsize() < MIN_FONT_PT:
            t.set_fontsize(MIN_FONT_PT)


def _narrow(fig: Any) -> bool:
    """Lay ``fig`` out again for a phone: NARROW_WIDTH wide, the panels of a grid one under the
    other (row by row), a panel that hid the tick labels it shared with its left neighbour
    showing them. False (nothing changed) when the figure is that narrow already or its panels
    are not one cell each of one grid."""
    from matplotlib.gridspec import GridSpec

    width, height = (float(x) for x in fig.get_size_inches())
    panels = [ax for ax in fig.axes if ax.get_subplotspec() is not None]  # not colorbars
    if width <= NARROW_WIDTH * 1.05 or not panels:
        return False
    grid = panels[0].get_subplotspec().get_gridspec()
    cells = []
    for ax in panels:
        spec = ax.get_subplotspec()
        if spec.get_gridspec() is not grid or len(spec.rowspan) != 1 or len(spec.colspan) != 1:
            return False
        cells.append((spec.rowspan.start, spec.colspan.start))
    rows, cols = grid.get_geometry()
    if cols > 1:
        # each panel as tall as it was wide, scaled to the new width, within limits
        row = min(
            max(height / rows, height / rows * NARROW_WIDTH * cols / width), 0.75 * NARROW_WIDTH
        )
        stacked = GridSpec(rows * cols, 1, figure=fig)
        for ax, (r, c) in zip(panels, cells, strict=True):
            ax.set_subplotspec(stacked[r * cols + c, 0])
            if c > 0 and len(ax.get_shared_y_axes().get_siblings(ax)) > 1:
                ax.yaxis.set_tick_params(labelleft=True)
        height = row * rows * cols
    fig.set_size_inches(NARROW_WIDTH, height)
    for ax in fig.axes:  # a title or label longer than the narrow figure breaks into lines
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label):
            text.set_wrap(True)
    return True


def _collide(fig: Any) -> list[Any]:
    """The labels written inside an axes (``ax.text``) that run into a neighbour."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        boxes = [(t, t.get_window_extent(renderer)) for t in ax.texts if t.get_text().strip()]
        for i, (a, box) in enumerate(boxes):
            if any(box.overlaps(other) for _, other in boxes[:i] + boxes[i + 1 :]):
                out.append(a)
    return out


def _outside(fig: Any) -> list[Any]:
    """The words of ``fig`` that run past its left or right edge."""
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    out = []
    for text in _texts(fig):
        extent = text.get_window_extent(renderer)
        if extent.x0 < box.x0 - 3 or extent.x1 > box.x1 + 3:  # 3 px: mathtext's own slack
            out.append(text)
    return out


_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def _two_lines(text: Any) -> bool:
    """Put a one-line Chinese title or label on two lines, broken nearest its middle: after a
    space, "/" or Chinese comma, or before an opening bracket. False where it is not such a text
    (or has no such place)."""
    words = text.get_text()
    if "\n" in words or not _CJK.search(words) or "$" in words:
        return False
    places = [i + 1 for i, ch in enumerate(words) if ch in " /，、"]
    places += [i for i, ch in enumerate(words) if ch in "（(" and i]
    places = [i for i in places if 0 < i < len(words)]
    if not places:
        return False
    at = min(places, key=lambda i: abs(i - len(words) / 2))
    text.set_text(words[:at].rstrip() + "\n" + words[at:].lstrip())
    return True


def _save_narrow(fig: Any) -> str | None:
    """``fig`` laid out for a phone (``_narrow``) and drawn, or None where it does not fit
    there: the layout engine gave up, a word lies outside the figure, or labels inside an axes
    run into each other even when turned upright."""
    if not _narrow(fig):
        return None
    # measuring words draws them: matplotlib's warnings (a glyph it lacks) are recorded, not shown
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svg = _save(fig)
        if _collide(fig):  # e.g. a number in each cell of a grid: turned upright, they fit
            for ax in fig.axes:
                for text in ax.texts:
                    text.set_rotation(90)
            svg = _save(fig)
        if _collide(fig):
            return None
        outside = _outside(fig)
        # matplotlib wraps a title or label at spaces only: a Chinese one goes on two lines
        if outside and all(_two_lines(text) for text in outside):
            svg = _save(fig)
            outside = _outside(fig)
        if outside:
            return None
    if any("constrained_layout not applied" in str(w.message) for w in caught):
        return None
    return svg


def _save(fig: Any) -> str:
    buf = io.StringIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.savefig(
            buf,
            format="svg",
            metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
        )
    return buf.getvalue()


def _number(m: re.Match[str]) -> str:
    text = f"{float(m[0]):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _webp(m: re.Match[str]) -> str:
    """An embedded PNG (heatmaps, rasterized meshes) as lossless WebP when that is smaller."""
    import base64

    try:
        from PIL import Image
    except ImportError:  # Pillow comes with matplotlib; without it the PNG stays
        return m[0]
    if m[1] in _webps:
        return _webps[m[1]]
    png = base64.b64decode(m[1])
    out = io.BytesIO()
    Image.open(io.BytesIO(png)).save(out, "WEBP", lossless=True, method=4)
    webp = "data:image/webp;base64," + base64.b64encode(out.getvalue()).decode("ascii")
    _webps[m[1]] = m[0] if out.tell() >= len(png) else webp
    return _webps[m[1]]


def _slim(svg: str) -> str:
    """Drop what the page does not need and make the colours follow the colour scheme."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"data:image/png;base64,([A-Za-z0-9+/=\s]+)", _webp, svg)
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<style[^>]*>.*?</style>\s*", "", svg, flags=re.S)
    # coordinates to 2 decimals (1/100 pt is far below a pixel)
    svg = re.sub(r'(?<=[\s"(,:MLCQZHV-])-?\d+\.\d{3,}', _number, svg)
    svg = re.sub(r"#000000\b", "currentColor", svg)
    svg = re.sub(r"fill: #ffffff\b", "fill: var(--md-default-bg-color)", svg)  # legend boxes
    for n, colour in enumerate(_CYCLE):
        svg = svg.replace(colour, f"var(--posenc-c{n})")
    svg = re.sub(r"<!--.*?-->\s*", "", svg, flags=re.S)
    svg = re.sub(r' transform="rotate\(-?0 [^")]*\)"', "", svg)
    # the page's font draws the text (posenc.css); matplotlib's font names are of no use there
    svg = re.sub(r";?\s*font-family:\s*'[^;\"]*'(?:,\s*'[^;\"]*')*(?:,\s*[\w-]+)?", "", svg)
    svg = svg.replace('style=""', "")
    svg = re.sub(r"\n\s*", "\n", svg)
    return svg


def to_html(fig: Any, *, alt: str = "") -> str:
    """The figure as an inline ``<svg>`` inside ``<div class="posenc-figure">``; closes it.

    On a Chinese page (during the site build) a string of the figure or ``alt`` given in English
    only is replaced by the Chinese of site_figures_zh's table, and math in Chinese words by
    Unicode text, before the figure is laid out and drawn."""
    import matplotlib.pyplot as plt
    from site_figures_zh import translate

    lang = _language()
    texts = _texts(fig)
    if lang == "zh":
        alt = translate(alt)
        for t in texts:
            t.set_text(translate(t.get_text()))
    _min_size(texts)
    key = None
    if _page[0] is not None:
        code = sys._getframe(1).f_code  # the code block that drew the figure
        page = _page[0].split("/", 1)[1] if _page[0].startswith(("en/", "zh/")) else _page[0]
        call = _calls.setdefault((_page[0], code), itertools.count())
        key = (lang, page, _code_key(code), next(call))
    store = _store[0] if key is not None else None
    sizes = [t.get_fontsize() for t in texts]
    stored = store.get(repr(key)) if store is not None else None
    if stored is not None and stored[1] == sizes:
        wide, narrow = stored[0], stored[2]  # drawn by an earlier build from the same code
    else:
        wide, narrow = _save(fig), _save_narrow(fig)
        if store is not None:
            store.put(repr(key), (wide, sizes, narrow))
    plt.close(fig)
    svgs = [_finish(wide, alt, "posenc-wide" if narrow else "")]
    if narrow is not None:
        svgs.append(_finish(narrow, alt, "posenc-narrow"))
    # the figure scales to the column; one drawn for phones too is marked for posenc.css
    narrow_mark = " data-narrow" if len(svgs) > 1 else ""
    return f'<div class="posenc-figure"{narrow_mark}>\n' + "\n".join(svgs) + "\n</div>"


def _finish(svg: str, alt: str, css_class: str) -> str:
    """The drawn SVG as the page holds it: slimmed, its ids unique on the page, labelled."""
    from html import escape

    svg = _slim(svg)
    # ids are unique within one SVG, not across the several inline on a page: prefix them all
    prefix = f"fig{next(_ids)}-"
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'(url\(#|href="#)([^)"]+)', lambda m: f"{m.group(1)}{prefix}{m.group(2)}", svg)
    attrs = f'class="{css_class}" ' if css_class else ""
    if alt:
        attrs += f'role="img" aria-label="{escape(alt)}" '
    return svg.replace("<svg ", f"<svg {attrs}", 1) if attrs else svg

"""Figures for the site, drawn at build time from posenc (matplotlib is imported lazily).

A page draws a figure with matplotlib in an ``exec="on" html="1"`` code block and prints
``posenc.plots.to_html(fig)``: the figure goes into the page as inline SVG, so it needs no
image file and no request. Labels are math or numbers only, so one code block serves both
languages.
"""

from __future__ import annotations

import io
import itertools
import re
import sys

__all__ = ["figure", "to_html"]

_ids = itertools.count(1)

# The site builds each page twice (en, zh) from byte-identical code blocks: a figure drawn for
# one language is reused for the other. The build hook names the page being rendered; outside a
# build (page None) nothing is cached.
_cache: dict = {}
_calls: dict = {}
_page = [None]


def _code_key(code):
    """What a code object computes, without its file name or the addresses of nested code."""
    consts = tuple(_code_key(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts)
    return (code.co_code, consts, code.co_names)


def _set_page(src_uri):
    """Called by the site's build hook: the page whose code blocks run next (None: no caching)."""
    _page[0] = src_uri
    if src_uri is None:
        _cache.clear()
        _calls.clear()


def figure(width: float = 6.4, height: float = 3.2, **kwargs):
    """A new matplotlib figure on the headless Agg backend: ``fig, ax = figure()``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # a fixed salt keeps the SVG deterministic; to_html makes ids unique per figure
    plt.rcParams.update({"svg.fonttype": "path", "svg.hashsalt": "posenc", "font.size": 9})
    return plt.subplots(figsize=(width, height), layout="constrained", **kwargs)


def to_html(fig, *, alt: str = "") -> str:
    """The figure as an inline ``<svg>`` inside ``<div class="posenc-figure">``; closes it."""
    import matplotlib.pyplot as plt

    key = None
    if _page[0] is not None:
        code = sys._getframe(1).f_code  # the code block that drew the figure
        page = _page[0].split("/", 1)[1] if _page[0].startswith(("en/", "zh/")) else _page[0]
        call = _calls.setdefault((_page[0], code), itertools.count())
        key = (page, _code_key(code), next(call), alt)
    if key in _cache:
        plt.close(fig)
        svg = _cache[key]
    else:
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
        svg = buf.getvalue()
        svg = svg[svg.index("<svg") :]
        if key is not None:
            _cache[key] = svg
    # ids are unique within one SVG, not across the several inline on a page: prefix them all
    prefix = f"fig{next(_ids)}-"
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'(url\(#|href="#)([^)"]+)', lambda m: f"{m.group(1)}{prefix}{m.group(2)}", svg)
    label = f' role="img" aria-label="{alt}"' if alt else ""
    return f'<div class="posenc-figure"{label}>\n{svg}\n</div>'

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

__all__ = ["figure", "to_html"]

_count = 0
_ids = itertools.count(1)


def figure(width: float = 6.4, height: float = 3.2, **kwargs):
    """A new matplotlib figure on the headless Agg backend: ``fig, ax = figure()``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    global _count
    _count += 1
    # a salt per figure: ids inside two inline SVGs on one page must not collide
    plt.rcParams.update({"svg.fonttype": "path", "svg.hashsalt": f"posenc-{_count}", "font.size": 9})
    return plt.subplots(figsize=(width, height), layout="constrained", **kwargs)


def to_html(fig, *, alt: str = "") -> str:
    """The figure as an inline ``<svg>`` inside ``<div class="posenc-figure">``; closes it."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    # ids are unique within one SVG, not across the several inline on a page: prefix them all
    prefix = f"fig{next(_ids)}-"
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'(url\(#|href="#)([^)"]+)', lambda m: f"{m.group(1)}{prefix}{m.group(2)}", svg)
    label = f' role="img" aria-label="{alt}"' if alt else ""
    return f'<div class="posenc-figure"{label}>\n{svg}\n</div>'

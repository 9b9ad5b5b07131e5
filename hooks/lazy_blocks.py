"""MkDocs hook: the browser lays out only the blocks a reader can see (``content-visibility``).

A math page is 6,000-11,000 elements, and a phone lays out and styles all of them before the
reader can scroll (Lighthouse: most of the main-thread time on /errata/, /rope/, /sinusoidal/).
Each top-level block below the first two phone screens gets ``data-lazy`` (posenc.css:
``content-visibility: auto``): the browser skips its style, layout and paint until it nears the
viewport. Its text stays in the page: find-in-page, links to anchors inside it, selection, tab
order and screen readers reach it as before.

A skipped block takes the size ``contain-intrinsic-size`` gives it, estimated here from its
content for a phone-wide column and rounded up (text lines, code lines, display math, figures,
table rows): too small a box would let the block's real text, which accessibility tools still
measure, fall over the blocks and footer below it (Lighthouse's contrast check then compares it
with the wrong background). Once drawn, the browser keeps the block's real size (``auto``).
Headings are never skipped, so the table of contents and the header's title follow the page;
as skipped blocks near a linked heading are drawn and shrink, assets/posenc.js keeps the heading
in view.

A set of tabs (the NumPy / PyTorch snippets) is not skipped as a whole: Material's tabs script
measures its labels on load (widths, offsets, scroll positions, a dozen reads), and each read
inside a skipped block lays that block out and skips it again. Each tab's content is skipped
instead; the labels stay drawn (issue 25: 110 ms of /rope/'s load at 4x CPU slowdown).
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

# blocks drawn at once: the first two screenfuls of a phone by the estimates below (a phone
# shows about 820 px), and at least the title and the first paragraphs
EAGER_PX = 1600
EAGER_MIN = 3
# a phone's text column (px), and what one line takes
COLUMN = 360
LINE = 27
# an overestimate is harmless (the block is measured when drawn); an underestimate is not
MARGIN = 1.5

# Only block-level tags decide where a top-level block ends: the spans of highlighted code and
# typeset math (most of a page's tags) are never looked at.
_BLOCK_TAG = re.compile(
    r"<(/?)(p|div|table|ul|ol|dl|details|blockquote|h[1-6]|figure|section|pre|svg|math|hr|form"
    r"|nav|aside|header|footer|iframe|video|audio|script|style|template)\b[^>]*?(/?)>",
    re.I,
)
_VOID = {"hr"}
_OPAQUE = ("svg", "math", "pre", "script", "style", "template")  # their insides are skipped
_HEADING = re.compile(r"h[1-6]")
_SVG_BOX = re.compile(r'(<svg[^>]*)viewBox="[\d.]+ [\d.]+ ([\d.]+) ([\d.]+)"')
_CJK = re.compile(r"[\u2e80-\uffff]")
_SPACE = re.compile(r"\s")
_STYLE = re.compile(r"\sstyle\s*=", re.I)


def _top_level(article: str) -> list[tuple[int, int, str]]:
    """(start, end, tag) of each block-level element directly inside the article's content."""
    blocks = []
    depth, start, name, pos = 0, 0, "", 0
    while (m := _BLOCK_TAG.search(article, pos)) is not None:
        comment = article.find("<!--", pos, m.start())
        if comment >= 0:  # a tag inside a comment is no tag
            end = article.find("-->", comment + 4)
            pos = len(article) if end < 0 else end + 3
            continue
        closing, tag, selfclosing = m[1] == "/", m[2].lower(), m[3] == "/"
        pos = m.end()
        if closing:
            depth -= 1
            if depth == 0:
                blocks.append((start, pos, name))
            continue
        if tag in _VOID or selfclosing:
            if depth == 0:
                blocks.append((m.start(), pos, tag))
            continue
        if depth == 0:
            start, name = m.start(), tag
        depth += 1
        if tag in _OPAQUE:  # jump to its matching end tag, past any nested one of its kind
            pos = _end_of(article, tag, pos)
    return blocks


def _end_of(article: str, tag: str, pos: int) -> int:
    """Where the end tag matching an open ``tag`` begins (nested ``tag`` elements counted)."""
    opening = re.compile(rf"<{tag}\b[^>]*?(/?)>|</{tag}>", re.I)
    depth = 1
    while (m := opening.search(article, pos)) is not None:
        if m[0].startswith("</"):
            depth -= 1
            if depth == 0:
                return m.start()
        elif not m[1]:
            depth += 1
        pos = m.end()
    return len(article)


def estimate(block: str) -> int:
    """A generous height (px) of a block on a phone."""
    height = 0.0
    svgs = _SVG_BOX.findall(block)
    if any("posenc-narrow" in tag for tag, _, _ in svgs):  # a figure's phone rendition
        svgs = [svg for svg in svgs if "posenc-wide" not in svg[0]]
    for _, width, tall in svgs:  # figures scale to the column (pt: 4/3 px)
        height += min(COLUMN, float(width) * 4 / 3) * float(tall) / float(width) + 40
    for pre in re.findall(r"<pre\b.*?</pre>", block, re.S):
        height += (pre.count("\n") + 1) * 22 + 40
    rows = block.count("<tr")
    # a wide table stacks its rows on a phone (hooks/tables.py): a line or more per cell
    height += block.count("<td") * LINE + rows * 16 if "data-stack" in block else rows * 2 * LINE
    height += block.count('<div class="arithmatex"') * 90 + block.count("<mtr") * 45
    # the text a reader sees: not code or figures (counted above), not MathML (KaTeX's visible
    # copy of each formula stays)
    prose = re.sub(r"<(pre|svg|style|script|math)\b.*?</\1>", "", block, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "", prose))
    spaces = len(_SPACE.findall(text))
    width = 8 * (len(text) - spaces) + 8 * len(_CJK.findall(text)) + 4 * len(text)
    paragraphs = len(re.findall(r"<(p|li|dt|dd|summary|h\d)\b", block)) + 1
    height += (math.ceil(width / COLUMN) + paragraphs) * LINE + paragraphs * 16
    return int(MARGIN * height) + 48


_HEADING_TAG = re.compile(r"<h[1-6]\b", re.I)
_TABS = re.compile(r'\sclass="tabbed-set\b')
_TAB_CONTENT = re.compile(r'<div class="tabbed-block"')


def _lazy(size: int) -> str:
    """The attributes that make a block lazy, ``size`` px tall until drawn."""
    return f' data-lazy style="contain-intrinsic-size:auto {size}px"'


def _mark_tabs(block: str) -> str:
    """A set of tabs with each tab's content (``tabbed-block``) marked lazy, the set itself not."""
    pieces, last = [], 0
    for m in _TAB_CONTENT.finditer(block):
        at = block.index(">", m.start())
        content = block[at + 1 : _end_of(block, "div", at + 1)]
        pieces += [block[last:at], _lazy(estimate(content))]
        last = at
    pieces.append(block[last:])
    return "".join(pieces)


def mark(article: str) -> str:
    """Give each top-level block below the first screenfuls its ``data-lazy`` size."""
    return _mark(article, 0, top=True)[0]


def _mark(article: str, above: int, top: bool = False) -> tuple[str, int]:
    """Mark the blocks of ``article`` (the first screenfuls of the page being ``above`` px tall
    so far); return the marked text and the height above its end. A block that holds a heading
    (an API page's object: its heading, then its docstring) is never skipped itself: its own
    blocks are marked instead. Reading a heading's position (Material's table of contents does,
    for every heading, on load) would lay out a skipped block around it, one forced layout per
    heading."""
    blocks = _top_level(article)
    pieces, last = [], 0
    for index, (start, end, tag) in enumerate(blocks):
        block = article[start:end]
        if (top and index < EAGER_MIN) or above < EAGER_PX:
            above += estimate(block)
            continue
        opening = article[start : article.index(">", start)]
        if _HEADING.fullmatch(tag) or tag in _VOID or _STYLE.search(opening):
            continue
        if "data-explorer=" in opening:  # an explorer (hooks/explorers.py) is drawn by its script
            continue
        at = start + len(opening)  # the end of the opening tag: its own attributes come first
        if _TABS.search(opening):
            pieces += [article[last:start], _mark_tabs(block)]
            last = end
            continue
        if _HEADING_TAG.search(block) and tag not in _OPAQUE:
            inner_end = article.rindex("<", start, end)  # its end tag
            inner, above = _mark(article[at + 1 : inner_end], above)
            pieces += [article[last : at + 1], inner]
            last = inner_end
            continue
        pieces += [article[last:at], _lazy(estimate(block))]
        last = at
    pieces.append(article[last:])
    return "".join(pieces), above


def on_post_page(output: str, page: Any, config: Any) -> str:
    start = output.find('<article class="md-content__inner')
    if start < 0:
        return output
    inner = output.index(">", start) + 1
    end = output.index("</article>", inner)
    return output[:inner] + mark(output[inner:end]) + output[end:]

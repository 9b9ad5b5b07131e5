"""MkDocs hook: wide tables stack their rows on a phone, so no column is ever out of sight.

A table of four or more columns, or an API parameter table (mkdocstrings' Name / Type /
Description / Default, also in Chinese), is wider than a phone's text column (issue 23: 184 of
the site's 402 tables had columns off-screen at 390 px, the atlas' five-column rows 740-809 px
wide). Each such table gets ``data-stack`` and each of its body cells the header of its column
as ``data-label``; below 720 px posenc.css shows every row as a block: its first cell as the row's
title, each other cell under the label of its column. On wider screens it stays a table. The
attribute, not a class, marks it: Material styles only tables without a class.

Every table of a page's article is written inside the two boxes Material's bundle would wrap it
in on load (``md-typeset__scrollwrap``, ``md-typeset__table``), each focusable so a keyboard can
scroll it (axe: scrollable-region-focusable), and the table gets the class ``posenc-table``:
Material wraps only tables without a class, and that wrap detached and re-inserted every table
at DOMContentLoaded, styling and laying out each one twice (issue 25: /zh/errata/'s first
table, 938 elements in view, 300 ms of layout at 4x CPU slowdown). posenc.css styles
``table.posenc-table`` with the rules Material gives ``table:not([class])``
(tests/test_page_hooks.py holds them equal to the installed Material's).

In every table, a long dotted name in a cell's text
(``Tipsv2TextEmbeddings.text_model.embeddings.position_embedding``, 443 px on the atlas) may
break after its dots (``<wbr>``), never inside a word: a narrow table then fits a phone too.
"""

from __future__ import annotations

import html
import re
from typing import Any

TABLE = re.compile(r"<table\b(?P<attrs>[^>]*)>(?P<body>.*?)</table>", re.S)
HEAD = re.compile(r"<thead>(.*?)</thead>", re.S)
TH = re.compile(r"<th\b[^>]*>(.*?)</th>", re.S)
ROW = re.compile(r"(<tr\b[^>]*>)(.*?)(</tr>)", re.S)
TD = re.compile(r"<td\b")
TAG = re.compile(r"<[^>]+>")
MIN_COLUMNS = 4  # from four columns on, no table of this site fits a phone's column
# a dotted name of 24 characters or more; not inside a tag, an entity or a URL ("://" before it)
DOTTED = re.compile(r"(?<![\w./:&#])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w(])")
LONG_NAME = 24
TEXT = re.compile(r"(<[^>]*>)|([^<]+)")


def _labels(head: str) -> list[str]:
    return [" ".join(html.unescape(TAG.sub("", cell)).split()) for cell in TH.findall(head)]


def _dots(match: re.Match[str]) -> str:
    name = match[0]
    return name.replace(".", ".<wbr>") if len(name) >= LONG_NAME else name


def break_names(body: str) -> str:
    """``body`` with ``<wbr>`` after the dots of long dotted names in its text (not in tags)."""
    return TEXT.sub(lambda m: m[1] or DOTTED.sub(_dots, m[2]), body)


def stack(table: re.Match[str]) -> str:
    """The table with ``data-stack`` and labelled cells, or as it was when it is narrow; long
    dotted names may break after their dots."""
    attrs, body = table["attrs"], break_names(table["body"])
    head = HEAD.search(body)
    if head is None or "data-stack" in attrs:
        return f"<table{attrs}>{body}</table>"
    labels = _labels(head[1])
    api = 'class="doc-section-item"' in body  # mkdocstrings' parameter tables
    if len(labels) < MIN_COLUMNS and not api:
        return f"<table{attrs}>{body}</table>"

    def label_row(row: re.Match[str]) -> str:
        cells = iter(["", *labels[1:]])  # the first cell is the row's title

        def label(cell: re.Match[str]) -> str:
            text = next(cells, "")
            return f'<td data-label="{html.escape(text)}"' if text else cell[0]

        return row[1] + TD.sub(label, row[2]) + row[3]

    rest = body[head.end() :]
    return f"<table data-stack{attrs}>" + body[: head.end()] + ROW.sub(label_row, rest) + "</table>"


WRAP = '<div class="md-typeset__scrollwrap" tabindex="0"><div class="md-typeset__table">'
CLASS = re.compile(r"\sclass\s*=")


def _wrap(table: re.Match[str]) -> str:
    if CLASS.search(table["attrs"]):  # Material leaves a table with a class as it is
        return table[0]
    attrs, body = table["attrs"], table["body"]
    return f'{WRAP}<table class="posenc-table" tabindex="0"{attrs}>{body}</table></div></div>'


def wrap(article: str) -> str:
    """Each table of ``article`` without a class in Material's two boxes, with ``posenc-table``."""
    return TABLE.sub(_wrap, article) if "<table" in article else article


def on_page_content(content: str, page: Any, **kwargs: Any) -> str:
    if "<table" not in content:
        return content
    return TABLE.sub(stack, content)


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Wrap the article's tables (after hooks/lazy_blocks.py marked its blocks: a lazy table
    stays the lazy element, inside its boxes, as it was under Material's wrap)."""
    start = output.find('<article class="md-content__inner')
    if start < 0:
        return output
    end = output.index("</article>", start)
    return output[:start] + wrap(output[start:end]) + output[end:]

"""MkDocs hook: join soft line breaks in Chinese text on the zh pages.

A paragraph wrapped across source lines renders each line break as a space. Between two Chinese
characters, or next to full-width punctuation (，。：；（）“”—…), that space reads as a stray
gap (Chromium does not drop it). Such a break is joined, together with the indentation of the
next line:

- a CJK character (ideograph or full-width punctuation) on both sides;
- full-width punctuation or “ ” ‘ ’ — … on either side, whatever stands on the other side
  (a Latin word, inline code, inline math), unless the next line starts a Markdown block
  (a list item, table row, heading, quote, display math, admonition, HTML, footnote) or the
  line before is a heading, an admonition or tab title, or a table row.

Links and emphasis markers are looked through: the break in "见\n[配对方式](#pairings)" sits
between 见 and 配 and is joined. A break between a Chinese character and a Latin word or inline
math ($d$) without punctuation is kept: it renders as the customary space between Chinese and
Latin text. Code blocks keep their lines.
"""

from __future__ import annotations

import re

HAN = "\u3400-\u4dbf\u4e00-\u9fff"
PUNCT = "\u3000-\u303f\uff00-\uffef\u2018\u2019\u201c\u201d\u2014\u2026"
CJK = f"[{HAN}{PUNCT}]"
BREAK = re.compile(r"(?P<prev>\S)\n(?P<indent>[ \t]*)(?P<next>\S)")
BLOCK_START = re.compile(
    r"(?:[-*+][ \t]|\d+[.)][ \t]|[|#>:<]|\$\$|\\\[|!!!|\?\?\?|\[\^[^\]]*\]:|={3}|-{3}|\*{3}|_{3})"
)
# Lines that end a block of their own: a heading, an admonition or tab title, a table row.
HEADER_LINE = re.compile(r"[ \t]*(?:#|!!!|\?\?\?|===|\|)")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.M)


# Markup around a break that is not text: a link ending the line or starting the next one, and
# emphasis markers. The characters the reader sees are its link text and the emphasised words.
LINK_BEFORE = re.compile(r"\[([^\[\]\n]*)\]\([^()\s]*\)(?:\{[^{}\n]*\})?[*_]*\Z")
LINK_AFTER = re.compile(r"[*_]*\[([^\[\]\n]*)\]\(")


def _seen_before(text: str, end: int) -> str:
    """The last character a reader sees before position ``end`` (the break)."""
    tail = text[max(0, end - 300) : end]
    m = LINK_BEFORE.search(tail)
    if m and m.group(1):
        return m.group(1)[-1]
    stripped = tail.rstrip("*_")
    return stripped[-1] if stripped else ""


def _seen_after(text: str, start: int) -> str:
    """The first character a reader sees from position ``start`` (after the break)."""
    m = LINK_AFTER.match(text, start)
    if m and m.group(1):
        return m.group(1)[0]
    head = text[start : start + 300].lstrip("*_")
    return head[0] if head else ""


def _join(match: re.Match[str]) -> str:
    text = match.string
    prev = _seen_before(text, match.end("prev"))
    nxt = _seen_after(text, match.start("next"))
    if not prev or not nxt:
        return match.group(0)
    line_start = text.rfind("\n", 0, match.start("prev")) + 1
    if BLOCK_START.match(text, match.start("next")) or HEADER_LINE.match(text, line_start):
        return match.group(0)
    both_cjk = re.match(CJK, prev) and re.match(CJK, nxt)
    by_punct = re.match(f"[{PUNCT}]", prev) or re.match(f"[{PUNCT}]", nxt)
    if both_cjk or by_punct:
        return match.group("prev") + match.group("next")
    return match.group(0)


def join_lines(text: str) -> str:
    """Join the soft line breaks of ``text`` (Markdown outside code blocks) described above."""
    # Overlapping breaks ("，\n。\n（") need a second pass: one match consumes its next character.
    return BREAK.sub(_join, BREAK.sub(_join, text))


def join_markdown(markdown: str) -> str:
    """``join_lines`` applied to a whole page, leaving fenced code blocks untouched."""
    parts, inside, start = [], None, 0
    for m in FENCE.finditer(markdown):
        if inside is None:
            parts.append(join_lines(markdown[start : m.start()]))
            inside, start = m.group(1)[0], m.start()
        elif m.group(1)[0] == inside:
            end = markdown.find("\n", m.end())
            end = len(markdown) if end < 0 else end
            parts.append(markdown[start:end])
            inside, start = None, end
    tail = markdown[start:]
    parts.append(tail if inside else join_lines(tail))
    return "".join(parts)


def on_page_markdown(markdown, page, **kwargs):
    if not page.file.src_uri.startswith("zh/"):
        return markdown
    return join_markdown(markdown)

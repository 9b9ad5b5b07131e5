"""The Chinese pages: one line per paragraph in the source, no stray space in the built text.

A paragraph wrapped across source lines renders each line break as a space; between two Chinese
characters, or next to full-width punctuation, that space reads as a stray gap (Chromium does
not drop it). The zh pages are written one line per paragraph (issue 42: the hook that joined
hard-wrapped lines at build time is gone), so no such break exists: the source check below
finds any soft break inside a paragraph, and the built zh pages are checked for stray spaces.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from sitecheck import DOCS, fenced, pages

pytestmark = pytest.mark.site  # the pages and the built site: device-independent (cpu leg)

HAN = "\u3400-\u4dbf\u4e00-\u9fff"
PUNCT = "\u3000-\u303f\uff00-\uffef\u2018\u2019\u201c\u201d\u2014\u2026"
# a line that starts a Markdown block of its own (list item, table row, heading, quote, HTML,
# display math, admonition, tab, footnote, definition, rule, include line, attribute list)
BLOCK_START = re.compile(
    r"(?:[-*+](?:[ \t]|$)|\d+[.)](?:[ \t]|$)|[|#>:<]|\$\$|\\[\[\]]|!!!|\?\?\?|\[\^[^\]]*\]:"
    r"|={3}|-{3}|\*{3}|_{3}|-+8<-+|\{[:.#]|\*\[)"
)
# a line whose block ends with it: a heading, an admonition or tab title, a table row
HEADER_LINE = re.compile(r"[ \t]*(?:#|!!!|\?\?\?|===|\|)")
RULE = re.compile(r"^\s*(?:-{3,}|={3,}|\*{3,}|_{3,})\s*$")  # a rule, front matter's fence
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")


def _not_prose(lines: list[str]) -> set[int]:
    """Lines where a break is no soft break of prose: code, display math, HTML comments, tables."""
    out: set[int] = set()
    i = 0
    while i < len(lines):
        block = fenced(lines, i)
        s = lines[i].strip()
        if block is not None:
            stop = block[3]
        elif s.startswith("$$") and not (len(s) > 2 and s.endswith("$$")):
            stop = next((j for j in range(i + 1, len(lines)) if "$$" in lines[j]), len(lines)) + 1
        elif s.startswith("\\["):
            stop = next((j for j in range(i, len(lines)) if "\\]" in lines[j]), len(lines)) + 1
        elif "<!--" in s and "-->" not in s[s.index("<!--") :]:
            stop = next((j for j in range(i + 1, len(lines)) if "-->" in lines[j]), len(lines)) + 1
        elif s.startswith(":::"):  # mkdocstrings: the identifier and its YAML options
            stop = next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines))
        elif TABLE_RULE.match(lines[i]):
            out.add(i - 1)
            stop = next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines))
        else:
            i += 1
            continue
        out.update(range(i, stop))
        i = stop
    return out


def wrapped(markdown: str) -> list[str]:
    """The soft line breaks inside paragraphs of ``markdown``, as "line | next line"."""
    lines = markdown.split("\n")
    skip = _not_prose(lines)
    out = []
    for n in range(1, len(lines)):
        a, b = lines[n - 1], lines[n]
        if not (a.strip() and b.strip()) or {n - 1, n} & skip:
            continue
        if BLOCK_START.match(b.lstrip()) or HEADER_LINE.match(a) or a.endswith(("  ", "\\")):
            continue
        if a.lstrip().startswith(("<", "{:", "$$", "\\[", "\\]", "--8<--")) or RULE.match(a):
            continue
        out.append(f"{a.strip()[-30:]} | {b.strip()[:30]}")
    return out


@pytest.mark.parametrize(
    "text",
    [
        "位置\n编码",  # two Chinese characters
        "位置，\n编码",
        "位置编码\nTransformer",  # Chinese then Latin: a space, but still a wrapped paragraph
        "- 列表项，\n  续行",  # a list item's continuation line
        '!!! note "注意"\n    正文，\n    续行',  # inside an admonition
        "English words\nmore words",
    ],
)
def test_the_source_check_finds_a_wrapped_paragraph(text):
    assert wrapped(text)


@pytest.mark.parametrize(
    "text",
    [
        "一段话。\n- 列表项",  # the next line starts a list
        "如下：\n$$\na\nb\n$$",  # display math keeps its lines
        "如下：\n| 表 | 格 |\n| --- | --- |\n| 甲 | 乙 |",  # a table
        "结束。\n## 标题",  # a heading
        '!!! note "注意，"\n    正文',  # an admonition title keeps its own line
        "# 标题。\n正文",
        "一行\n\n```python\n>>> x = 1\n>>> y = 2\n```",  # code keeps its lines
        "> 引文，\n> 续行",  # a quote: each line marked
        '如下：\n\n--8<-- "docs_src/rope.md:check"\n--8<-- "docs_src/rope.md:check-2"',
        "硬换行  \n下一行",  # a hard line break
        '---\ndescription: "页面的描述"\n---',  # front matter
        '::: posenc.sinusoidal\n    options:\n      heading: "posenc.sinusoidal"',  # mkdocstrings
    ],
)
def test_the_source_check_passes_what_is_no_wrapped_paragraph(text):
    assert not wrapped(text)


@pytest.mark.parametrize("page", pages("zh"))
def test_zh_source_is_one_line_per_paragraph(page):
    found = wrapped((DOCS / "zh" / page).read_text(encoding="utf-8"))
    assert not found, f"{len(found)} paragraphs wrapped across lines:\n" + "\n".join(found[:20])


class _Blocks(HTMLParser):
    """Text of the paragraphs, list items, table cells and headings inside ``<article>``.

    Code, math (KaTeX or MathJax markup), figures and permalinks are not prose: each becomes the
    placeholder X, so the spaces around it (customary between Chinese and Latin text) stay but
    are never judged. Page furniture added by templates (class ``posenc-...``: downloads, the
    date of the last check) is not Markdown and not this hook's business; it is skipped too.
    """

    BLOCKS = {"p", "li", "td", "th", "dd", "dt", "h1", "h2", "h3", "h4", "figcaption", "div"}
    SKIP_TAGS = {"pre", "code", "script", "style", "svg", "math", "mjx-container", "kbd"}
    SKIP_CLASSES = ("arithmatex", "katex", "headerlink", "posenc-")
    VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col"}

    def __init__(self):
        super().__init__()
        self.blocks, self.current, self.inside, self.skip = [], [], False, 0

    def handle_starttag(self, tag, attrs):
        if self.skip:
            self.skip += tag not in self.VOID
            return
        cls = dict(attrs).get("class") or ""
        if tag in self.SKIP_TAGS or any(c.startswith(self.SKIP_CLASSES) for c in cls.split()):
            self.current.append("" if "posenc-" in cls else "X")
            self.skip = 0 if tag in self.VOID else 1
            return
        if tag == "article":
            self.inside = True
        if tag in self.BLOCKS:
            self.flush()

    def handle_endtag(self, tag):
        if self.skip:
            self.skip -= tag not in self.VOID
            return
        if tag in self.BLOCKS or tag == "article":
            self.flush()
        if tag == "article":
            self.inside = False

    def handle_data(self, data):
        if self.inside and not self.skip:
            self.current.append(data)

    def flush(self):
        text = "".join(self.current).strip()
        if text:
            self.blocks.append(text)
        self.current = []


def _article_text(html: str) -> list[str]:
    parser = _Blocks()
    parser.feed(html)
    parser.flush()
    return parser.blocks


STRAY = re.compile(rf"[{PUNCT}][ \t\n]+(?=\S)|(?<=\S)[ \t\n]+[{PUNCT}]|[{HAN}][ \t\n]+(?=[{HAN}])")


def test_rendered_zh_pages_have_no_stray_space_in_chinese(built_site):
    assert built_site.returncode == 0, built_site.log[-2000:]
    offenders = []
    for page in pages("zh"):
        stem = page[:-3]
        path = built_site.path / "zh" / ("index.html" if stem == "index" else f"{stem}/index.html")
        for block in _article_text(path.read_text(encoding="utf-8")):
            for m in STRAY.finditer(block):
                # a space between Chinese text and a placeholder (math, code) is customary
                context = block[max(0, m.start() - 12) : m.end() + 12]
                offenders.append(f"{page}: …{context}…")
    assert not offenders, f"{len(offenders)} stray spaces:\n" + "\n".join(offenders[:40])


def test_the_rendered_check_catches_a_stray_space():
    html = "<article><p>位置， 编码</p><p>位置 编码</p><p>维度 <code>d</code> 为偶数</p></article>"
    blocks = _article_text(html)
    assert [bool(STRAY.search(b)) for b in blocks] == [True, True, False]

"""hooks/zh_lines.py: soft line breaks in Chinese text render without a stray space.

Tested twice: the hook's functions on strings (which breaks are joined, which are kept), and the
built zh pages, whose paragraph text must hold no space next to full-width punctuation and none
between two Chinese characters.
"""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser

import pytest

from sitecheck import ROOT, pages

pytestmark = pytest.mark.site  # a build hook and the built site: device-independent (cpu leg)

_spec = importlib.util.spec_from_file_location("zh_lines", ROOT / "hooks" / "zh_lines.py")
zh_lines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zh_lines)
join = zh_lines.join_lines


@pytest.mark.parametrize(
    "text, expected",
    [
        ("位置\n编码", "位置编码"),  # two Chinese characters
        ("位置，\n编码", "位置，编码"),  # full-width comma before the break
        ("它的维度\n（偶数）", "它的维度（偶数）"),  # full-width bracket after the break
        ("这是“位置\n编码”", "这是“位置编码”"),  # quotation marks
        ("称为“旋转”\n的方法", "称为“旋转”的方法"),
        ("位置—\n位置", "位置—位置"),  # dash
        ("等等……\n然后", "等等……然后"),  # ellipsis
        ("见下文：\n`posenc.sinusoidal`", "见下文：`posenc.sinusoidal`"),  # punctuation, then code
        ("用 RoPE\n。", "用 RoPE。"),  # Latin word, then punctuation
        ("见：\n  缩进的续行", "见：缩进的续行"),  # continuation line of a list item
        ("，\n。\n（", "，。（"),  # overlapping breaks
        (
            "另一种约定见\n[配对方式](#pairings)一节",
            "另一种约定见[配对方式](#pairings)一节",
        ),  # a link
        ("正是[旋转一页](rotation.md)\n指出的", "正是[旋转一页](rotation.md)指出的"),
        ("**尺度不匹配。**\n论文", "**尺度不匹配。**论文"),  # emphasis markers
    ],
)
def test_breaks_that_are_joined(text, expected):
    assert join(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "位置编码\nTransformer",  # Chinese then Latin: the customary space stays
        "维度\n$d$ 为偶数",  # Chinese then inline math
        "一段话。\n- 列表项",  # the next line starts a list
        "如下：\n$$",  # display math
        "如下：\n1. 第一项",  # an ordered list
        "如下：\n| 表 | 格 |",  # a table
        "结束。\n## 标题",  # a heading
        '!!! note "注意，"\n    正文',  # an admonition title keeps its own line
        "# 标题。\n正文",  # a heading line is never joined to the next
        "English words\nmore words",  # nothing Chinese at all
        "见 [Hugging Face](https://huggingface.co)\n的代码",  # link text ends in Latin
        "a · b\n· c",  # a middle dot is not Chinese punctuation
    ],
)
def test_breaks_that_are_kept(text):
    assert join(text) == text


def test_code_blocks_keep_their_lines():
    page = "文字，\n继续。\n\n```python\n>>> x = 1  # 中文，\n>>> y = 2\n```\n\n后文，\n继续。\n"
    out = zh_lines.join_markdown(page)
    assert ">>> x = 1  # 中文，\n>>> y = 2" in out
    assert "文字，继续。" in out and "后文，继续。" in out


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


PUNCT = zh_lines.PUNCT
STRAY = re.compile(
    rf"[{PUNCT}][ \t\n]+(?=\S)|(?<=\S)[ \t\n]+[{PUNCT}]|[{zh_lines.HAN}][ \t\n]+(?=[{zh_lines.HAN}])"
)


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

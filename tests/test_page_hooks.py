"""The page-speed hooks (issue 13), as functions and on the built site.

- hooks/code_blocks.py writes Material's copy button into every code block at build time (one
  button per block, an id on its ``<code>`` that the button targets) and unwraps Pygments'
  colourless ``n``/``w``/``p``/``o`` spans inside code, the code's text unchanged.
- hooks/lazy_blocks.py gives the article's top-level blocks below the first phone screens
  ``data-lazy`` and a ``contain-intrinsic-size`` estimate (posenc.css: ``content-visibility:
  auto``); headings and the first blocks are never lazy, and the hook only adds attributes.

The browser side (the estimates are overestimates on a phone, the palette toggle) is in
tests/test_browser_speed.py.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from ci_rule import require
from sitecheck import load_hook

ROOT = Path(__file__).resolve().parent.parent


code_blocks = load_hook("code_blocks")
lazy_blocks = load_hook("lazy_blocks")
tables = load_hook("tables")

TAGS = re.compile(r"<[^>]+>")
LAZY = re.compile(r' data-lazy style="contain-intrinsic-size:auto (\d+)px"')


def _text(html: str) -> str:
    return TAGS.sub("", html)


def _page(src_uri: str) -> SimpleNamespace:
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))


# ------------------------------------------------------------------------------- code_blocks

# the forms the site's code blocks take: pymdownx.highlight (with its empty span), a doctest
# block carrying data-copy, a plain fenced block (bibtex), and a mermaid block (not code)
HIGHLIGHTED = (
    '<div class="language-python highlight"><pre><span></span><code>'
    '<span class="n">x</span><span class="w"> </span><span class="o">=</span>'
    '<span class="w"> </span><span class="n">f</span><span class="p">(</span>'
    '<span class="mi">1</span><span class="p">,</span><span class="w"> </span>'
    '<span class="s2">&quot;a&lt;b&quot;</span><span class="p">)</span>\n'
    '<span class="k">for</span> <span class="n">i</span> <span class="ow">in</span> '
    '<span class="nb">range</span><span class="p">(</span><span class="mi">3</span>'
    '<span class="p">):</span>\n</code></pre></div>'
)
DOCTEST = (
    '<div class="language-python highlight" data-copy="import posenc"><pre><span></span><code>'
    '<span class="gp">&gt;&gt;&gt; </span><span class="kn">import</span> <span class="nn">posenc'
    '</span>\n<span class="go">ok</span>\n</code></pre></div>'
)
BIBTEX = '<pre><code class="language-bibtex">@misc{posenc,\n  title = {x}\n}\n</code></pre>'
MERMAID = '<pre class="mermaid"><code>graph LR; a--&gt;b</code></pre>'
ARTICLE = (
    '<article class="md-content__inner md-typeset"><h1>T</h1><p>Use <code>f(x)</code>.</p>'
    + HIGHLIGHTED
    + DOCTEST
    + BIBTEX
    + MERMAID
    + "</article>"
)


def test_copy_buttons_one_per_block_with_unique_ids() -> None:
    out = code_blocks.copy_buttons(ARTICLE, "en")
    targets = re.findall(r'data-clipboard-target="#([^"]+)"', out)
    assert targets == ["posenc-code-1", "posenc-code-2", "posenc-code-3"]  # mermaid skipped
    for target in targets:
        assert out.count(f'id="{target}"') == 1
    # each button sits in its own <pre>, before that <pre>'s <code id=...>
    for pre in re.findall(r"<pre\b.*?</pre>", out, re.S):
        if "mermaid" in pre:
            assert "md-code__button" not in pre and "<code>" in pre
            continue
        assert pre.count('<button class="md-code__button"') == 1, pre
        m = re.search(r'data-clipboard-target="#([^"]+)".*?<code id="([^"]+)"', pre, re.S)
        assert m and m[1] == m[2], pre
    assert out.count('data-md-type="copy"') == 3
    assert 'title="Copy to clipboard"' in out
    assert "<p>Use <code>f(x)</code>.</p>" in out  # inline code is no block


def test_copy_buttons_keep_the_code_text() -> None:
    out = code_blocks.copy_buttons(ARTICLE, "en")
    assert _text(out) == _text(ARTICLE)
    # only the button markup and the ids were added
    stripped = re.sub(r'<span class="md-code__nav">.*?</span>', "", out)
    assert re.sub(r' id="posenc-code-\d+"', "", stripped) == ARTICLE


def test_copy_buttons_place_the_button_after_highlights_empty_span() -> None:
    out = code_blocks.copy_buttons(HIGHLIGHTED, "en")
    assert out.startswith(
        '<div class="language-python highlight"><pre><span></span><span class="md-code__nav">'
    )
    bib = code_blocks.copy_buttons(BIBTEX, "en")
    assert "<span></span>" not in bib
    assert bib.startswith('<pre><span class="md-code__nav"><button class="md-code__button"')
    assert '<code id="posenc-code-1" class="language-bibtex">' in bib


def test_copy_buttons_leave_mermaid_alone() -> None:
    assert code_blocks.copy_buttons(MERMAID, "en") == MERMAID
    other = '<pre class="x mermaid y"><code>a</code></pre>'
    assert code_blocks.copy_buttons(other, "en") == other


@pytest.mark.parametrize("lang,title", [("en", "Copy to clipboard"), ("zh", "复制")])
def test_copy_button_title_in_the_page_language(lang: str, title: str) -> None:
    out = code_blocks.copy_buttons(BIBTEX, lang)
    assert f'title="{title}"' in out
    other = "Copy to clipboard" if lang == "zh" else "复制"
    assert other not in out


def test_drop_plain_spans_inside_code_only() -> None:
    outside = '<p><span class="n">name</span> <span class="o">+</span></p>'
    html = outside + HIGHLIGHTED + DOCTEST
    out = code_blocks.drop_plain_spans(html)
    assert out.startswith(outside)  # spans outside <code> stay
    assert _text(out) == _text(html)
    codes = re.findall(r"<code[ >].*?</code>", out, re.S)
    assert codes
    for code in codes:
        assert not re.search(r'<span class="(?:n|w|p|o)">', code), code
    # the coloured tokens keep their spans
    for cls in ("k", "s2", "mi", "nb", "ow", "gp", "go", "kn", "nn"):
        assert html.count(f'<span class="{cls}">') == out.count(f'<span class="{cls}">') > 0, cls
    assert "x = f(" in out and "&quot;a&lt;b&quot;</span>)\n" in out


def test_drop_plain_spans_keeps_spans_that_hold_markup() -> None:
    # a span of one of those classes around markup is not plain text: left as it is
    html = '<code><span class="n"><span class="k">a</span></span></code>'
    out = code_blocks.drop_plain_spans(html)
    assert _text(out) == "a" and '<span class="k">a</span>' in out


def test_code_blocks_on_post_page() -> None:
    head = "<html><head><title>x</title></head><body><pre><code>head</code></pre>"
    page = head + ARTICLE + "</body></html>"
    out = code_blocks.on_post_page(page, _page("zh/rope.md"), None)
    assert out.startswith(head)  # nothing before the article changes
    assert out.count('title="复制"') == 3 and "posenc-code-4" not in out
    assert '<span class="n">' not in out.split("<article", 1)[1]
    en = code_blocks.on_post_page(page, _page("rope.md"), None)
    assert en.count('title="Copy to clipboard"') == 3
    # no article, or no code: unchanged
    bare = "<html><body><pre><code><span class='n'>x</span></code></pre></body></html>"
    assert code_blocks.on_post_page(bare, _page("index.md"), None) == bare
    prose = '<html><body><article class="md-content__inner">x</article></body></html>'
    assert code_blocks.on_post_page(prose, _page("index.md"), None) == prose


# ------------------------------------------------------------------------------- lazy_blocks


def test_top_level_blocks_of_nested_markup() -> None:
    article = (
        '<h1 id="t">T</h1>\n'
        '<div class="a"><div class="b"><p>x</p><div>y</div></div></div>\n'
        "<hr>\n"
        '<div class="posenc-figure"><svg viewBox="0 0 10 10"><g><path d="M0 0"/><g><div>'
        "</g></g><circle/></svg></div>\n"
        '<svg viewBox="0 0 4 2"><g><rect/></g></svg>\n'
        '<pre><span></span><code><span class="k">for</span> <span>x</span></code></pre>\n'
        "<p>a<br>b<br/>c <img src=x.png> d</p>\n"
        "<br>\n"
        "<ul><li><p>one</p></li><li>two<ul><li>three</li></ul></li></ul>\n"
        '<script>if (a<b) document.write("<div>")</script>\n'
        "<table><tr><td>1</td></tr></table>"
    )
    blocks = lazy_blocks._top_level(article)
    tags = [tag for _, _, tag in blocks]
    # a line break or an image between blocks is no block and does not disturb the nesting
    assert tags == ["h1", "div", "hr", "div", "svg", "pre", "p", "ul", "script", "table"]
    # the blocks cover the article but for what lies between them
    last = 0
    for start, end, tag in blocks:
        assert article[last:start].strip() in ("", "<br>"), article[last:start]
        assert article[start:].startswith(f"<{tag}")
        assert tag in lazy_blocks._VOID or article[:end].endswith(f"</{tag}>")
        last = end
    assert article[last:] == ""


@pytest.mark.site
def test_top_level_agrees_with_html_parser_on_the_built_site(built_site) -> None:
    """On every built page the hook splits the article into the same top-level elements as
    Python's HTML parser does."""
    assert built_site.returncode == 0, built_site.log[-2000:]
    checked = 0
    for path in sorted(built_site.path.rglob("*.html")):
        article = _article(path.read_text(encoding="utf-8"))
        if article is None:
            continue
        parser = _TopLevel()
        parser.feed(article)
        parser.close()
        assert parser.depth == 0, path
        # phrasing content directly in the article (none today) is no block to the hook
        tags = [tag for tag in parser.tags if tag not in _PHRASING]
        assert [tag for _, _, tag in lazy_blocks._top_level(article)] == tags, path
        checked += 1
    assert checked > 40


def _blocks(n: int, words: int = 60) -> list[str]:
    return [f"<p>{'word ' * words}{i}</p>" for i in range(n)]


def _lazy_indexes(marked: str) -> list[int]:
    return [
        i
        for i, (start, _, _) in enumerate(lazy_blocks._top_level(marked))
        if marked[start:].split(">", 1)[0].find("data-lazy") > 0
    ]


def test_mark_leaves_the_first_screens_eager() -> None:
    blocks = ["<h1>Title</h1>", *_blocks(30)]
    article = "\n".join(blocks)
    marked = lazy_blocks.mark(article)
    sizes = [lazy_blocks.estimate(b) for b in blocks]
    # the first block that is lazy: at least EAGER_MIN in, and the blocks above it fill EAGER_PX
    first = next(
        i
        for i in range(len(blocks))
        if i >= lazy_blocks.EAGER_MIN and sum(sizes[:i]) >= lazy_blocks.EAGER_PX
    )
    assert _lazy_indexes(marked) == list(range(first, len(blocks)))
    assert first >= lazy_blocks.EAGER_MIN and sum(sizes[: first - 1]) < lazy_blocks.EAGER_PX
    assert [int(s) for s in LAZY.findall(marked)] == sizes[first:]


def test_mark_never_marks_the_first_blocks_even_when_huge() -> None:
    huge = "<pre><code>" + "line\n" * 400 + "</code></pre>"
    assert lazy_blocks.estimate(huge) > lazy_blocks.EAGER_PX
    article = "".join([huge] * lazy_blocks.EAGER_MIN + ["<p>after</p>"] * 3)
    marked = lazy_blocks.mark(article)
    assert _lazy_indexes(marked) == [lazy_blocks.EAGER_MIN + i for i in range(3)]


def test_mark_never_marks_headings_void_tags_or_styled_blocks() -> None:
    late = [
        '<h2 id="a">A</h2>',
        "<p>text</p>",
        '<h3 id="b" class="x">B</h3>',
        "<hr>",
        '<div style="color: red"><p>styled</p></div>',
        '<p class="c" style="margin:0">styled too</p>',
        "<h6>F</h6>",
        '<div class="admonition"><p>boxed</p></div>',
    ]
    article = "\n".join(_blocks(20) + late)
    marked = lazy_blocks.mark(article)
    assert not re.search(r"<h[1-6][^>]*data-lazy", marked)
    assert "<hr data-lazy" not in marked
    assert '<div style="color: red">' in marked and '<p class="c" style="margin:0">' in marked
    for opening in re.findall(r"<[a-z][^>]*>", marked):
        assert opening.count("style=") <= 1, opening
    assert '<p data-lazy style="contain-intrinsic-size:auto ' in marked.split('<h2 id="a">')[1]
    # after the block's own attributes: `<div class="admonition"` still starts the tag, as
    # other hooks and tests look for it
    assert (
        '<div class="admonition" data-lazy style="contain-intrinsic-size:auto '
        in (marked.split("<h6>")[1])
    )


def test_mark_never_skips_a_heading_inside_a_block() -> None:
    """An API object (a div holding its heading, then its docstring) is never lazy itself: the
    blocks inside it are, headings stay drawn (Material's table of contents reads the position of
    every heading on load, and a heading inside a skipped block forced a layout of that block)."""
    api = (
        '<div class="doc doc-object"><h2 id="f">f</h2><div class="doc-contents">'
        + "<p>"
        + "word " * 120
        + "</p>" * 1
        + '<div class="doc doc-object"><h3 id="f.g">g</h3><div class="doc-contents"><p>g text</p>'
        + "<table><tr><td>1</td></tr></table></div></div></div></div>"
    )
    article = "\n".join(_blocks(20) + [api, "<p>after</p>"])
    marked = lazy_blocks.mark(article)
    assert LAZY.sub("", marked) == article
    assert '<div class="doc doc-object"><h2' in marked  # the object: not lazy
    assert '<div class="doc-contents">' in marked  # it holds a heading (g's): not lazy either
    inside = marked.split('<h2 id="f">')[1]
    assert re.search(r"<p data-lazy style=\"contain-intrinsic-size:auto \d+px\">word", inside)
    # g's docstring holds no heading: lazy whole
    assert '<h3 id="f.g">g</h3><div class="doc-contents" data-lazy style=' in inside
    assert "<p data-lazy" in marked.split("</div></div></div></div>")[1]  # the blocks after
    # no heading anywhere below a data-lazy element
    stack = []
    for m in re.finditer(r"<(/?)([a-z0-9]+)([^>]*)>", marked):
        if m[1]:
            stack.pop()
            continue
        assert not (re.fullmatch(r"h[1-6]", m[2]) and any(stack)), m[0]
        stack.append("data-lazy" in m[3])
    # above the first screens an object is eager whole, as any block
    assert "data-lazy" not in lazy_blocks.mark(api)


TABS = (
    '<div class="tabbed-set tabbed-alternate" data-tabs="1:2">'
    '<input checked="checked" id="__tabbed_1_1" name="__tabbed_1" type="radio" />'
    '<input id="__tabbed_1_2" name="__tabbed_1" type="radio" />'
    '<div class="tabbed-labels"><label for="__tabbed_1_1">NumPy</label>'
    '<label for="__tabbed_1_2">PyTorch</label></div>\n<div class="tabbed-content">\n'
    '<div class="tabbed-block">\n<div class="highlight"><pre><code>'
    + "x = 1\n" * 30
    + '</code></pre></div>\n</div>\n<div class="tabbed-block">\n<div class="highlight"><pre><code>'
    + "y = 2\n" * 3
    + "</code></pre></div>\n</div>\n</div>\n</div>"
)


def test_mark_skips_each_tab_not_the_set_of_tabs() -> None:
    """Material's tabs script measures a set's labels on load: a skipped set would be laid out
    for each read. Below the first screens each tab's content is lazy, sized for its own code,
    the set and its labels are not; above them nothing is."""
    article = "\n".join(_blocks(20) + [TABS, "<p>after</p>"])
    marked = lazy_blocks.mark(article)
    assert LAZY.sub("", marked) == article
    assert '<div class="tabbed-set tabbed-alternate" data-tabs="1:2">' in marked
    blocks = re.findall(
        r'<div class="tabbed-block" data-lazy style="contain-intrinsic-size:auto (\d+)px">', marked
    )
    assert len(blocks) == 2
    long, short = map(int, blocks)
    assert long >= 30 * 22 and short < long  # each sized for its own 30 and 3 lines
    assert '<div class="tabbed-labels">' in marked and "<label" in marked
    assert re.search(r"<p data-lazy style=\"[^\"]+\">after", marked)
    assert "data-lazy" not in lazy_blocks.mark(TABS)


def test_wide_code_is_focusable_before_material_mounts_it() -> None:
    narrow = "<pre><code>x = 1\nprint(x)</code></pre>"
    wide = '<pre><code><span class="k">import</span> posenc; posenc.rope_frequencies(128, base=10000.0)</code></pre>'
    escaped = "<pre><code>" + "&lt;" * 20 + "</code></pre>"  # 20 characters, not 80
    html = code_blocks.focusable_wide_code(code_blocks.copy_buttons(narrow + wide + escaped, "en"))
    assert html.count('tabindex="0"') == 1
    assert '<code id="posenc-code-2" tabindex="0">' in html
    assert code_blocks.focusable_wide_code(html) == html  # never marked twice


def test_mark_only_adds_attributes() -> None:
    article = "\n".join(
        ["<h1>T</h1>", *_blocks(12), '<div class="x"><svg viewBox="0 0 100 50"><g/></svg></div>']
        + ["<h2>H</h2>", "<table><tr><td>1</td></tr><tr><td>2</td></tr></table>", "<br>"]
        + ["<pre><span></span><code>a\nb</code></pre>", "<ol><li>1</li></ol>"]
    )
    marked = lazy_blocks.mark(article)
    assert len(LAZY.findall(marked)) >= 5
    assert LAZY.sub("", marked) == article
    assert lazy_blocks.mark(marked) == marked  # a marked block has a style: never marked twice
    assert lazy_blocks.mark("") == ""
    short = "<h1>T</h1><p>x</p>"
    assert lazy_blocks.mark(short) == short


def test_estimate_grows_with_content() -> None:
    est = lazy_blocks.estimate
    assert est("<p>" + "word " * 200 + "</p>") > est("<p>" + "word " * 20 + "</p>") > est("<p></p>")
    # Chinese characters are wider than Latin letters
    assert est("<p>" + "位置编码" * 50 + "</p>") > est("<p>" + "abcd" * 50 + "</p>")
    code = "<pre><code>{}</code></pre>"
    assert est(code.format("x = 1\n" * 30)) > est(code.format("x = 1\n" * 3))
    table = "<table>{}</table>"
    assert est(table.format("<tr><td>1</td></tr>" * 20)) > est(table.format("<tr><td>1</td></tr>"))
    figure = '<div><svg viewBox="0 0 100 {}"><g/></svg></div>'
    assert est(figure.format(200)) > est(figure.format(50)) > est("<div></div>")
    items = "<ul>{}</ul>"
    assert est(items.format("<li>a</li>" * 10)) > est(items.format("<li>a</li>"))
    math = '<div class="arithmatex">{}</div>'
    assert est(math.format("<math><mtr></mtr><mtr></mtr><mtr></mtr></math>")) > est(
        math.format("<math><mtr></mtr></math>")
    )
    # at least a phone line of a paragraph
    assert est("<p>x</p>") >= lazy_blocks.LINE


def test_lazy_on_post_page_marks_only_the_article() -> None:
    body = "\n".join(_blocks(20))
    page = (
        '<html><body><div class="before"><p>x</p></div>'
        f'<article class="md-content__inner md-typeset">{body}</article>'
        "<footer><p>y</p></footer></body></html>"
    )
    out = lazy_blocks.on_post_page(page, _page("rope.md"), None)
    assert LAZY.sub("", out) == page
    before, inside, after = (
        out.partition("<article")[0],
        out.split("<article")[1],
        out.split("</article>")[1],
    )
    assert "data-lazy" not in before and "data-lazy" not in after and "data-lazy" in inside
    plain = "<html><body><p>x</p></body></html>"
    assert lazy_blocks.on_post_page(plain, _page("index.md"), None) == plain


# ------------------------------------------------------------------------------- built site


def _article(page: str) -> str | None:
    start = page.find('<article class="md-content__inner')
    if start < 0:
        return None
    inner = page.index(">", start) + 1
    return page[inner : page.index("</article>", inner)]


_VOID_HTML = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"}
_VOID_HTML |= {"source", "track", "wbr"}


_PHRASING = {"a", "abbr", "b", "br", "button", "code", "em", "i", "img", "input", "kbd", "label"}
_PHRASING |= {"mark", "small", "span", "strong", "sub", "sup", "wbr"}


class _TopLevel(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.depth, self.tags = 0, []

    def handle_starttag(self, tag, attrs):
        if self.depth == 0:
            self.tags.append(tag)
        if tag not in _VOID_HTML:
            self.depth += 1

    def handle_startendtag(self, tag, attrs):
        if self.depth == 0:
            self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag not in _VOID_HTML:
            self.depth -= 1


def _built_pages(built_site) -> list[tuple[str, str]]:
    assert built_site.returncode == 0, built_site.log[-2000:]
    found = [
        (path.relative_to(built_site.path).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(built_site.path.rglob("*.html"))
    ]
    assert len(found) > 40
    return found


@pytest.mark.site
def test_built_code_blocks_have_one_copy_button_each(built_site) -> None:
    blocks = 0
    for name, page in _built_pages(built_site):
        targets = re.findall(r'data-clipboard-target="#([^"]+)"', page)
        assert len(targets) == len(set(targets)), name
        for target in targets:
            assert page.count(f'id="{target}"') == 1, (name, target)
        for pre in re.findall(r"<pre\b.*?</pre>", page, re.S):
            if "<code" not in pre:
                continue
            blocks += 1
            assert pre.count('class="md-code__button"') == 1, (name, pre[:300])
            m = re.search(r'data-clipboard-target="#([^"]+)".*?<code id="([^"]+)"', pre, re.S)
            assert m and m[1] == m[2], (name, pre[:300])
        title = "复制" if name.startswith("zh/") else "Copy to clipboard"
        assert page.count('class="md-code__button"') == page.count(f'title="{title}" data-clip')
    assert blocks > 500


@pytest.mark.site
def test_built_code_has_no_plain_token_spans(built_site) -> None:
    spans = 0
    for name, page in _built_pages(built_site):
        for code in re.findall(r"<code[ >].*?</code>", page, re.S):
            plain = re.findall(r'<span class="(?:n|w|p|o)">[^<]*</span>', code)
            assert not plain, (name, plain[:3])
            spans += code.count("<span class=")
    assert spans > 1000  # the highlighter's other spans are there


@pytest.mark.site
def test_built_lazy_blocks(built_site) -> None:
    """No heading is lazy, every lazy opening tag has one style, and the heavy pages have lazy
    blocks; the built articles are what mark() makes of them without their data-lazy."""
    lazy_pages = set()
    for name, page in _built_pages(built_site):
        assert not re.search(r"<h[1-6]\b[^>]*data-lazy", page), name
        assert not re.search(r'<div class="tabbed-set[^>]*data-lazy', page), name
        for opening in re.findall(r"<[a-zA-Z][^>]*data-lazy[^>]*>", page):
            assert opening.count("style=") == 1, (name, opening)
        article = _article(page)
        if article is None:
            assert "data-lazy" not in page, name
            continue
        if "data-lazy" in article:
            lazy_pages.add(name)
        # the tables' boxes are written after the marks (hooks/tables.py): take them off first
        bare = article.replace(tables.WRAP, "").replace("</table></div></div>", "</table>")
        bare = bare.replace('<table class="posenc-table" tabindex="0"', "<table")
        assert tables.wrap(lazy_blocks.mark(LAZY.sub("", bare))) == article, name
    for stem in ("errata", "rope", "sinusoidal"):
        assert {f"{stem}/index.html", f"zh/{stem}/index.html"} <= lazy_pages


def test_site_config_for_the_speed_hooks() -> None:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    features = config["theme"]["features"]
    assert features and "content.code.copy" not in features
    # code blocks mount when they come into view (hooks/code_blocks.py): Material's bundle reads
    # the feature (a Material without it would mount them all on load again)
    assert "content.lazy" in features
    material = require("material")
    scripts = Path(material.__file__).parent / "templates" / "assets" / "javascripts"
    bundles = list(scripts.glob("bundle.*.min.js"))
    assert bundles and all('"content.lazy"' in b.read_text(encoding="utf-8") for b in bundles)
    assert {"hooks/code_blocks.py", "hooks/lazy_blocks.py"} <= set(config["hooks"])
    css = (ROOT / "docs" / "assets" / "posenc.css").read_text(encoding="utf-8")
    assert re.search(r"\.md-typeset \[data-lazy\]\s*\{\s*content-visibility:\s*auto;", css)


def _css_rules(css: str, media: str = "") -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """(at-rule around it, selectors, declarations) of each style rule, whitespace normalised."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules, pos = [], 0
    while (open_at := css.find("{", pos)) >= 0:
        prelude = " ".join(css[pos:open_at].split())
        depth, at = 1, open_at + 1
        while depth:
            depth += {"{": 1, "}": -1}.get(css[at], 0)
            at += 1
        body = css[open_at + 1 : at - 1]
        if prelude.startswith("@"):
            rules += _css_rules(body, prelude)
        else:
            selectors = frozenset(
                re.sub(r"\s*([>+~])\s*", r"\1", x.strip()) for x in prelude.split(",")
            )
            norm = (re.sub(r"\s*:\s*", ":", " ".join(d.split()), count=1) for d in body.split(";"))
            rules.append((media, selectors, frozenset(d for d in norm if d)))
        pos = at
    return rules


def test_posenc_tables_get_the_rules_material_gives_tables_without_a_class() -> None:
    """hooks/tables.py gives every article table the class posenc-table (so Material's bundle
    does not re-wrap it on load); posenc.css must then style it as the installed Material styles
    ``table:not([class])``: every such rule, in the same at-rule, for the class."""
    material = require("material")
    sheets = Path(material.__file__).parent / "templates" / "assets" / "stylesheets"
    (main,) = sheets.glob("main.*.min.css")
    ours = _css_rules((ROOT / "docs" / "assets" / "posenc.css").read_text(encoding="utf-8"))
    wanted = []
    for media, selectors, declarations in _css_rules(main.read_text(encoding="utf-8")):
        if any("table:not([class])" in s for s in selectors):
            renamed = frozenset(
                s.replace("table:not([class])", "table.posenc-table") for s in selectors
            )
            wanted.append((media, renamed, declarations))
    assert len(wanted) >= 12  # Material 9.8: 12 rules, one of them for print
    missing = [rule for rule in wanted if rule not in ours]
    assert not missing, missing


# ------------------------------------------------------------------------------ edge cases
# Markup the site's pages do not have today, which the hook must still read right.


def test_mark_sees_a_style_attribute_after_a_newline() -> None:
    article = "\n".join(_blocks(20)) + '\n<div\nstyle="color: red">x</div>'
    marked = lazy_blocks.mark(article)
    assert marked.endswith('<div\nstyle="color: red">x</div>')


@pytest.mark.parametrize(
    "article",
    [
        '<div><svg viewBox="0 0 1 1"><svg></svg><g></g></svg></div><p>x</p><p>y</p>',
        "<div>a</div><!-- <div> --><p>x</p><p>y</p>",
    ],
)
def test_top_level_nested_svg_and_comments(article: str) -> None:
    assert [tag for _, _, tag in lazy_blocks._top_level(article)] == ["div", "p", "p"]


@pytest.mark.site
def test_built_pages_defer_materials_bundle_and_set_its_root_attributes_first(built_site) -> None:
    """overrides/main.html: every page (404s included) loads Material's bundle deferred, before
    posenc's own deferred scripts, and sets in its head, before any body element, what the
    bundle sets on <html> as it starts (issue 25)."""
    pages = 0
    for name, page in _built_pages(built_site):
        if "<body" not in page:
            continue  # a redirect stub
        pages += 1
        scripts = re.findall(r"<script src=\"([^\"]+)\"([^>]*)>", page)
        bundle = [
            i
            for i, (src, _) in enumerate(scripts)
            if re.search(r"javascripts/bundle\.\w+\.min\.js$", src)
        ]
        assert len(bundle) == 1, (name, scripts)
        assert scripts[bundle[0]][1].strip() == "defer", (name, scripts[bundle[0]])
        ours = [
            i for i, (src, _) in enumerate(scripts) if re.search(r"assets/posenc[\w-]*\.js$", src)
        ]
        assert ours and min(ours) > bundle[0], (name, scripts)
        head = page[: page.index("<body")]
        root = head.index('r.classList.replace("no-js","js")')
        assert 'r.classList.add("js-focus-visible")' in head[root:]
        assert 'r.setAttribute("data-js-focus-visible","")' in head[root:]
    assert pages > 80

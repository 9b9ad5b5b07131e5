"""The build-time side of issue 23 (pages that read well on a phone), as functions.

- hooks/katex-render.cjs (through hooks/katex.py) cuts a display formula into boxes only after
  top-level relations and between its ",\\qquad" parts, never inside brackets; inline math
  after relations and operators outside brackets;
- hooks/tables.py marks wide tables to stack on a phone and labels their cells;
- hooks/page_meta.py serves the Chinese 404 for /zh/ paths under ``mkdocs serve``;
- hooks/lazy_blocks.py sizes a figure by its phone rendition and a stacked table by its cells.

The browser side is in tests/test_browser.py.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from sitecheck import load_hook

ROOT = Path(__file__).resolve().parent.parent


tables = load_hook("tables")
page_meta = load_hook("page_meta")
lazy_blocks = load_hook("lazy_blocks")


# --- math: where a formula may break -------------------------------------------------------------


@pytest.fixture(scope="module")
def katex():
    if shutil.which("node") is None or not (ROOT / "node_modules" / "katex").is_dir():
        pytest.skip("KaTeX needs Node.js and node_modules (npm ci)")
    return load_hook("katex")


def _bases(rendered: str) -> list[str]:
    """The visible formula's boxes, each as the classes of its atoms (struts and spaces out)."""
    html = rendered[rendered.index('class="katex-html"') :]
    pieces = re.split(r'<span class="(?:katex-)?base">', html)[1:]  # "katex-base" from KaTeX 0.18
    return [
        [c for c in re.findall(r'<span class="(m[a-z]+)[ "]', piece) if c != "mspace"]
        for piece in pieces
    ]


def test_display_formula_breaks_only_after_top_level_relations(katex):
    (out,) = katex.typeset([(r"PE[p, 2i + 1] = a + b - c \le d", True)])
    bases = _bases(out["html"])
    assert len(bases) == 3  # "PE[p, 2i + 1] =", "a + b - c \le", "d"
    assert [b[-1] for b in bases[:-1]] == ["mrel", "mrel"]
    assert "posenc-part" not in out["html"]


def test_display_formula_parts_at_comma_qquad(katex):
    tex = r"PE[p, 2i] = \sin(p\,\omega_i), \qquad PE[p, 2i+1] = \cos(p\,\omega_i)"
    (out,) = katex.typeset([(tex, True)])
    html = out["html"]
    assert html.count('class="posenc-part"') == 2
    assert len(_bases(html)) == 4  # each part breaks after its "="
    assert "<math" in html and 'display="block"' in html  # screen readers read it whole


def test_brackets_joined_by_katex_still_count(katex):
    # KaTeX writes ")]" as one closing atom: the \approx after it is at the top level
    (out,) = katex.typeset([(r"x = [\sin(2/100)] \approx [0.02]", True)])
    assert len(_bases(out["html"])) == 3


def test_inline_math_breaks_after_operators_outside_brackets(katex):
    (out,) = katex.typeset([(r"(a + b) + c = d", False)])
    bases = _bases(out["html"])
    assert [b[-1] for b in bases[:-1]] == ["mbin", "mrel"], bases  # not after the inner "+"


def test_inline_list_breaks_after_its_spaced_commas(katex):
    # [sin 2, cos(2/100), ...] in a sentence: after ",\ " only, not after the comma of f(a, b)
    (out,) = katex.typeset([(r"[\sin 2,\ \cos(2/100),\ f(a, b)]", False)])
    assert [b[-1] for b in _bases(out["html"])] == ["mpunct", "mpunct", "mclose"]
    (out,) = katex.typeset([(r"[\sin 2,\ \cos 2] = x", True)])  # display: not in brackets
    assert len(_bases(out["html"])) == 2


def test_inline_list_of_three_commas_breaks_after_each(katex):
    # a list without spaces (362 px at 360 px on /sinusoidal/): after each of its commas; an
    # index of one comma ("PE[p, 2i]") or the arguments of f(a, b) stay whole
    tex = r"[\sin p\omega_0, \ldots, \sin p\omega_{d/2-1}, \cos p\omega_0] = PE[p, 2i] + f(a, b)"
    (out,) = katex.typeset([(tex, False)])
    assert [b[-1] for b in _bases(out["html"])] == ["mpunct"] * 3 + ["mrel", "mbin", "mclose"]


# --- tables that stack on a phone ----------------------------------------------------------------

WIDE = (
    "<table>\n<thead>\n<tr>\n<th>model type</th>\n<th>status</th>\n<th>layers</th>\n"
    '<th>call &amp; "key"</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>llama</td>\n<td>ok</td>\n'
    "<td>full</td>\n<td><code>apply_rope</code></td>\n</tr>\n</tbody>\n</table>"
)


def test_wide_table_is_marked_and_its_cells_labelled():
    out = tables.on_page_content(f"<p>x</p>{WIDE}", page=None)
    assert "<table data-stack>" in out
    cells = re.findall(r"<td([^>]*)>", out)
    assert cells == [
        "",
        ' data-label="status"',
        ' data-label="layers"',
        ' data-label="call &amp; &quot;key&quot;"',
    ]
    assert "<th>status</th>" in out  # the header row stays for wide screens


def test_narrow_and_headless_tables_stay_tables():
    narrow = "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>"
    bare = "<table><tr><td>1</td><td>2</td><td>3</td><td>4</td></tr></table>"
    for html in (narrow, bare):
        assert tables.on_page_content(html, page=None) == html


def test_long_dotted_names_in_tables_break_after_their_dots():
    # the atlas' 443 px cell at 390 px: a narrow table whose name had no place to break
    name = "Tipsv2TextEmbeddings.text_model.embeddings.position_embedding"
    link = '<a href="https://example.org/a.b.c.d.e.f.g.h.i.j">torch.nn.functional.softmax</a>'
    cell = f"<table><tr><td>{name} (X)<br>{link} np.float64 f.a_long_method_name_here(</td></tr></table>"
    out = tables.on_page_content(cell, page=None)
    assert "Tipsv2TextEmbeddings.<wbr>text_model.<wbr>embeddings.<wbr>position_embedding" in out
    assert 'href="https://example.org/a.b.c.d.e.f.g.h.i.j"' in out  # never inside a tag
    assert ">torch.<wbr>nn.<wbr>functional.<wbr>softmax</a>" in out
    assert " np.float64 " in out and "f.a_long_method_name_here(" in out  # short; a call
    assert out.replace("<wbr>", "") == cell


def test_api_parameter_tables_stack_at_any_width():
    api = (
        "<table><thead><tr><th>Name</th><th>Type</th><th>Description</th></tr></thead><tbody>"
        '<tr class="doc-section-item"><td><code>dim</code></td><td>int</td><td>x</td></tr>'
        "</tbody></table>"
    )
    out = tables.on_page_content(api, page=None)
    assert out.startswith("<table data-stack>") and 'data-label="Description"' in out


def test_article_tables_are_written_in_materials_boxes_with_a_class():
    """Material's bundle wraps each table without a class on load (detach, re-insert: styled and
    laid out twice); the hook writes the same boxes at build time, and the class stops the wrap."""
    lazy = '<table data-stack data-lazy style="contain-intrinsic-size:auto 90px"><tr><td>1</td></tr></table>'
    kept = '<table class="highlighttable"><tr><td>2</td></tr></table>'
    outside = "<table><tr><td>0</td></tr></table>"
    page = f'<nav>{outside}</nav><article class="md-content__inner md-typeset"><p>a</p>{lazy}{kept}</article>'
    out = tables.on_post_page(page, page=None, config=None)
    boxes = '<div class="md-typeset__scrollwrap" tabindex="0"><div class="md-typeset__table">'
    assert (
        out
        == page.replace(
            lazy,
            f'{boxes}<table class="posenc-table" tabindex="0"{lazy[6:]}</div></div>',  # its lazy size kept
        )
    )
    assert out.count("<table") == 3 and out.startswith(f"<nav>{outside}</nav>")  # nav untouched
    assert tables.on_post_page("<p>no article</p>", page=None, config=None) == "<p>no article</p>"


# --- the Chinese 404 under mkdocs serve ---------------------------------------------------------


def test_dev_server_answers_zh_paths_with_the_chinese_404(tmp_path):
    (tmp_path / "zh").mkdir()
    (tmp_path / "404.html").write_text("english 404", encoding="utf-8")
    (tmp_path / "zh" / "404.html").write_text("中文 404", encoding="utf-8")
    answers: list = []
    server = SimpleNamespace(root=str(tmp_path), mount_path="/", _serve_request=lambda e, s: None)
    page_meta.on_serve(server, config=None, builder=None)

    def ask(path):
        answers.clear()
        body = server._serve_request({"PATH_INFO": path}, lambda *a: answers.append(a))
        return body, answers[:1]

    body, status = ask("/zh/no-such-page/")
    assert body == ["中文 404".encode()] and status[0][0] == "404 Not Found"
    assert ask("/no-such-page/") == (None, [])  # MkDocs' own handler: the English 404
    assert ask("/zhx/") == (None, [])


def test_dev_server_hook_keeps_what_exists():
    server = SimpleNamespace(root="/nowhere", mount_path="/", _serve_request=lambda e, s: [b"ok"])
    page_meta.on_serve(server, config=None, builder=None)
    assert server._serve_request({"PATH_INFO": "/zh/rope/"}, None) == [b"ok"]


# --- lazy blocks: sizes on a phone ---------------------------------------------------------------


def test_lazy_estimate_counts_the_phone_rendition_and_stacked_rows():
    wide = '<svg class="posenc-wide" width="460pt" viewBox="0 0 460.8 201.6">'
    narrow = '<svg class="posenc-narrow" width="288pt" viewBox="0 0 288 460">'
    alone = lazy_blocks.estimate(f'<div class="posenc-figure">{wide}</svg></div>')
    both = lazy_blocks.estimate(
        f'<div class="posenc-figure" data-narrow>{wide}</svg>{narrow}</svg></div>'
    )
    assert both > alone  # the taller phone drawing is the one a phone shows
    rows = "<tr>" + "<td>x</td>" * 5 + "</tr>"
    assert lazy_blocks.estimate(f"<table data-stack>{rows * 10}</table>") > lazy_blocks.estimate(
        f"<table>{rows * 10}</table>"
    )


# --- figures: the phone rendition ------------------------------------------------------------


def test_a_chinese_label_too_wide_for_the_phone_figure_goes_on_two_lines():
    # /zh/performance/: "耗时 / 最快同类实现（对数坐标）" ran past the 4 in figure, so the page
    # had no phone rendition and its words showed at 6.4 px on a 360 px phone
    import matplotlib

    matplotlib.use("Agg")
    import site_figures as plots  # hooks/ (pyproject: pythonpath)

    plots._set_page("zh/performance.md")  # as during the build: Chinese fonts
    try:
        fig, ax = plots.figure(6.4, 2.0)
        ax.barh([0, 1], [1.0, 2.0])
        ax.set_xlabel("与最快同类实现的耗时之比（对数坐标，越小越快）", fontsize=13)
        svg = plots._save_narrow(fig)
    finally:
        plots._set_page(None)
        matplotlib.pyplot.close("all")
    assert svg is not None
    label = ax.xaxis.label.get_text()
    assert (
        label.count("\n") == 1
        and label.replace("\n", "") == "与最快同类实现的耗时之比（对数坐标，越小越快）"
    )
    assert not plots._two_lines(ax.xaxis.label)  # once only

"""Figures are drawn per language at build time (hooks/site_figures.py, hooks/figures.py): the same
code draws the English figure with English words and the Chinese one with Chinese words (from the
block's ``words`` table, or the glossary's table in site_figures_zh for strings a block gives in
English only), each laid out by matplotlib for its own words.

What these tests assert holds with or without a CJK font installed: a Chinese figure is compared
with matplotlib's own drawing of the same Chinese words on the same machine, never with the
English figure's layout (a CJK font measured by matplotlib moves the layout, issue 40)."""

from __future__ import annotations

import html
import re
import types

import pytest
import site_figures as plots
from site_figures_zh import plain_math, translate

from ci_rule import require
from sitecheck import pages

pytestmark = pytest.mark.site  # the site's build code: device-independent, run in the cpu leg

TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)
FIGURE = re.compile(r'<div class="posenc-figure"[^>]*>\s*(<svg.*?</svg>)', re.S)


def _words(svg: str) -> list[str]:
    """Each text's string (a mathtext label: its glyphs, one tspan each, joined)."""
    texts = [re.sub(r">\s+<", "><", t) for t in TEXT.findall(svg)]
    return [html.unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in texts]


def _same(a: str, b: str) -> bool:
    """The same figure HTML but for the per-page id prefix."""
    return re.sub(r"\bfig\d+-", "fig-", a) == re.sub(r"\bfig\d+-", "fig-", b)


STRINGS = {
    "en": {
        "sin": "sinusoidal",
        "x": "relative position $j - i$",
        "y": "wavelength $\\lambda_i$",
        "title": "bidirectional",
        "note": "causal",
        "alt": "time relative to the fastest peer",
    },
    "zh": {
        "sin": "正弦",
        "x": "相对位置 $j - i$",
        "y": "波长 $\\lambda_i$",
        "title": "双向",
        "note": "因果",
        "alt": "相对最快同类实现的耗时",
    },
}


def _draw(w) -> str:
    """The figure the blocks below draw, with the strings ``w``."""
    fig, ax = plots.figure(4.0, 2.5)
    ax.plot([0, 1, 2], [0, 1, 4], label=w["sin"])
    ax.plot([0, 1, 2], [4, 1, 0], label="$x_i$")
    ax.set_xlabel(w["x"])
    ax.set_ylabel(w["y"])
    ax.set_title(w["title"])
    ax.text(1.0, 2.0, w["note"], rotation=30, ha="center")
    ax.legend()
    return plots.to_html(fig, alt=w["alt"])


def _table_block() -> str:
    """A code block as a page writes one: its strings from a table per language."""
    return _draw(plots.words(STRINGS))


def _english_block() -> str:
    """A block that gives its strings in English only: the glossary's table translates them."""
    return _draw(STRINGS["en"])


def _chosen_words() -> str:
    """A block that picks its words with page_language() (mrope.md, layer-patterns.md do)."""
    zh = plots.page_language() == "zh"
    fig, ax = plots.figure(4.0, 2.5)
    ax.bar([0, 1], [3, 1])
    ax.set_xlabel("配对索引 $i$" if zh else "pair index $i$")
    ax.set_title("分段" if zh else "bands")
    return plots.to_html(fig, alt="两种布局" if zh else "both layouts")


def _outside_a_build(strings, lang) -> str:
    """What matplotlib draws for ``strings`` outside a build (math in Chinese words as Unicode
    text, as a Chinese page draws it): what a page's figure must equal, on this machine's fonts."""
    plots._set_page(None)
    if lang == "zh":
        strings = {k: plain_math(v) for k, v in strings.items()}
    return _draw(strings)


@pytest.fixture
def build(monkeypatch):
    """Run a block on the English page, then on its Chinese twin; count matplotlib's saves."""
    require("matplotlib")
    saves: list[int] = []
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig: saves.append(1) or save(fig))

    def run(block, langs=("en", "zh")):
        plots._set_page(None)  # a new build
        try:
            out = []
            for lang in langs:
                plots._set_page(f"{lang}/figures.md")
                out.append(block())
            return out, saves
        finally:
            plots._set_page(None)

    return run


@pytest.mark.parametrize("block", [_table_block, _english_block])
def test_each_language_is_drawn_for_its_own_words(build, block):
    """The Chinese page's figure is matplotlib's drawing of the Chinese words (laid out for
    them), not the English figure with its words swapped; the English page's is the English."""
    (en, zh), saves = build(block)
    assert len(saves) == 2  # one drawing per language
    assert _same(en, _outside_a_build(STRINGS["en"], "en"))
    assert _same(zh, _outside_a_build(STRINGS["zh"], "zh"))
    assert {"相对位置 j - i", "波长 λᵢ", "双向", "正弦", "因果"} <= set(_words(zh))
    prose = [w for w in _words(zh) if re.search("[A-Za-z]{2,}", w) and w != "xi"]  # xi: $x_i$
    assert not prose, _words(zh)
    label = re.search(r'aria-label="([^"]*)"', zh)
    assert label and label[1] == "相对最快同类实现的耗时", label


def test_words_gives_the_strings_of_the_page_being_built(build):
    (en, zh), _ = build(lambda: plots.words(STRINGS))
    assert en is STRINGS["en"] and zh is STRINGS["zh"]
    plots._set_page(None)
    assert plots.words(STRINGS) is STRINGS["en"]  # outside a build: English


@pytest.mark.parametrize(
    ("table", "error", "match"),
    [
        (["en", "zh"], TypeError, "table must be a mapping of language to strings, got list"),
        ({"en": {"x": "a"}}, ValueError, r"languages \['en', 'zh'\], got \['en'\]"),
        ({"en": {"x": "a"}, "zh": {"x": "甲"}, "fr": {}}, ValueError, "got \\['en', 'fr', 'zh'\\]"),
        ({"en": {"x": "a"}, "zh": "甲"}, TypeError, r"table\['zh'\] must be a mapping, got str"),
        ({"en": {"x": 1}, "zh": {"x": "甲"}}, TypeError, r"table\['en'\]\['x'\] must be a str"),
        ({"en": {"x": "a"}, "zh": {"y": "乙"}}, ValueError, r"table\['zh'\] must have the keys"),
    ],
)
def test_words_refuses_a_table_that_is_not_one_per_language(table, error, match):
    with pytest.raises(error, match=match):
        plots.words(table)


def test_a_block_that_picks_its_words_is_drawn_with_them(build):
    (en, zh), saves = build(_chosen_words)
    assert len(saves) == 2
    assert "配对索引 i" in _words(zh) and "分段" in _words(zh) and "bands" in _words(en)
    assert 'aria-label="两种布局"' in zh


def test_each_figure_of_a_page_has_its_own_drawing(build):
    def two():
        return _table_block() + _chosen_words()

    (en, zh), saves = build(two)
    assert len(saves) == 4
    en_figs, zh_figs = FIGURE.findall(en), FIGURE.findall(zh)
    assert len(en_figs) == len(zh_figs) == 2
    assert "正弦" in _words(zh_figs[0]) and "分段" in _words(zh_figs[1])


def test_a_phone_rendition_is_laid_out_for_the_chinese_words(build, monkeypatch):
    """A wide figure is drawn a second time for phones, in each language: a Chinese title too
    long for the phone's width goes on two lines there, and neither rendition keeps English."""
    widths: list[float] = []
    save = plots._save
    monkeypatch.setattr(
        plots, "_save", lambda fig: widths.append(float(fig.get_size_inches()[0])) or save(fig)
    )
    title = "RoPE on q and k (1, 32, 4096, 128), float32, every allocation in huge pages (madvise)"

    def block():
        fig, axes = plots.figure(6.4, 2.0, nrows=2, squeeze=False)
        for ax in axes[:, 0]:
            ax.barh([0, 1], [0.5, 2.0])
            ax.set_xscale("log")
            ax.set_title(title, fontsize=10)
        axes[-1, 0].set_xlabel("time / fastest peer (log scale)")
        return plots.to_html(fig, alt="time relative to the fastest peer")

    (en, zh), _ = build(block)
    wide, narrow = plots.NARROW_WIDTH, plots.NARROW_WIDTH
    assert widths[0] == 6.4 and widths.count(6.4) == 2 and narrow in widths  # both languages
    assert len(FIGURE.findall(zh)) == 1 and 'class="posenc-narrow"' in zh
    phone = re.findall(r'<svg class="posenc-narrow".*?</svg>', zh, re.S)
    assert len(phone) == 1 and "所有内存分配都用大页" in "".join(_words(phone[0]))
    assert not [w for w in _words(zh) if "huge pages" in w or "fastest" in w]
    assert wide == plots.NARROW_WIDTH


def test_a_font_installed_after_matplotlibs_cache_is_found(monkeypatch):
    """matplotlib lists the fonts its cache held when it was built; a CJK font installed later
    (as .ci/run installs fonts-noto-cjk) is found in the system's font folders all the same, so
    the state of a cache never decides how a Chinese label is measured. Shown with a font every
    machine with matplotlib has (its own DejaVu Sans, named as the CJK font would be), so the
    outcome is the same with or without a CJK font."""
    require("matplotlib")
    from pathlib import Path

    import matplotlib
    from matplotlib import font_manager

    bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSerif.ttf"
    assert bundled.is_file()
    stale = [f for f in font_manager.fontManager.ttflist if f.name != "DejaVu Serif"]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", stale)  # a cache without it
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda: [str(bundled)])
    monkeypatch.setattr(plots, "_CJK_WANTED", ("DejaVu Serif",))
    monkeypatch.setattr(plots, "_CJK_FILES", ("DejaVuSerif",))
    monkeypatch.setattr(plots, "_cjk_found", [])
    assert plots._cjk_fonts() == ["DejaVu Serif"]
    assert "DejaVu Serif" in {f.name for f in font_manager.fontManager.ttflist}


def test_outside_a_build_figures_are_english(build):
    require("matplotlib")
    plots._set_page(None)
    out = _english_block()
    assert "sinusoidal" in _words(out) and not plots._calls
    assert translate("sinusoidal") == "正弦"


@pytest.mark.parametrize("name", pages("en"))
def test_site_figures_in_both_languages_and_chinese_words(built_site, name):
    """On the built site each page has as many figures in Chinese as in English; no Chinese
    figure keeps a label the glossary's table translates, and each is labelled in Chinese."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    page = name.removesuffix(".md")
    page = "" if page == "index" else page + "/"
    en = (built_site.path / page / "index.html").read_text(encoding="utf-8")
    zh = (built_site.path / "zh" / page / "index.html").read_text(encoding="utf-8")
    en_figs, zh_figs = FIGURE.findall(en), FIGURE.findall(zh)
    assert len(en_figs) == len(zh_figs)
    for z in zh_figs:
        left = [w for w in _words(z) if translate(w) != w]
        assert not left, (name, left)
        for label in re.findall(r'aria-label="([^"]*)"', z):
            assert re.search("[\u4e00-\u9fff]", label), (name, label)


def test_annotations_are_translated_too(build):
    def block():
        fig, ax = plots.figure(4.0, 2.5)
        ax.plot([0, 1], [0, 1])
        ax.annotate(
            "causal",
            (0.5, 0.5),
            xytext=(6, 4),
            textcoords="offset points",
            arrowprops={"arrowstyle": "->"},
        )
        ax.annotate("$k=3$", (0.2, 0.8))
        return plots.to_html(fig)

    (en, zh), saves = build(block)
    assert len(saves) == 2
    assert "因果" in _words(zh) and "causal" not in _words(zh) and "causal" in _words(en)


def _hook():
    """hooks/figures.py, loaded as a module."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "figures_hook", Path(__file__).resolve().parent.parent / "hooks" / "figures.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def _store(tmp_path, page: str = "page markdown"):
    """hooks/figures.py's store of drawn figures, in a temporary folder."""
    store = _hook().FigureStore(tmp_path / "figures", [])
    store.page = page
    return store


def test_a_stored_figure_is_not_drawn_again_and_is_the_same(build, tmp_path, monkeypatch):
    """A later build takes an unchanged figure from the store, in each language: no matplotlib
    save, the same HTML."""
    monkeypatch.setattr(plots, "_store", [_store(tmp_path)])
    (first, saves) = build(_table_block)
    assert len(saves) == 2 and len(list((tmp_path / "figures").iterdir())) == 2
    monkeypatch.setattr(plots, "_store", [_store(tmp_path)])  # the next build's store
    (second, saves) = build(_table_block)
    assert len(saves) == 2  # still the two saves of the first build
    assert [re.sub(r"\bfig\d+-", "", h) for h in second] == [
        re.sub(r"\bfig\d+-", "", h) for h in first
    ]
    assert "正弦" in _words(second[1]) and "sinusoidal" in _words(second[0])


def test_a_changed_page_or_package_draws_the_figure_anew(build, tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "_store", [_store(tmp_path)])
    build(_table_block)
    monkeypatch.setattr(plots, "_store", [_store(tmp_path, page="edited markdown")])
    (_, saves) = build(_table_block)
    assert len(saves) == 4  # the page changed: drawn again
    store = _store(tmp_path)
    store.salt = "another package source"
    monkeypatch.setattr(plots, "_store", [store])
    (_, saves) = build(_table_block)
    assert len(saves) == 6  # the package (or a library) changed: drawn again


def test_figure_images_are_files_of_the_site(built_site):
    """Heat maps and other raster parts of figures are files (assets/figures/), not base64 in
    the page: every page's references resolve to a written file, and only small images (under
    2 KiB: colour bars) stay inline. (Each language's figure is laid out for its own words, so
    an image is shared by both only where the two plot boxes came out the same size.)"""
    assert built_site.returncode == 0, built_site.log[-3000:]
    used: dict[str, set[str]] = {}
    for page in built_site.path.rglob("index.html"):
        text = page.read_text(encoding="utf-8")
        for data in re.findall(r'href="data:image/[a-z]+;base64,([^"]+)"', text):
            assert len(data) * 3 // 4 < 2048, (page, len(data))
        lang = "zh" if page.relative_to(built_site.path).parts[0] == "zh" else "en"
        # a written image is shown by an <img loading="lazy">, never by an SVG <image>
        assert not re.search(r'<image\b[^>]*href="(?:\.\./)*assets/figures/', text), page
        for ref in re.findall(
            r'<img src="((?:\.\./)*assets/figures/[^"]+)" alt="" loading="lazy"', text
        ):
            target = (page.parent / ref).resolve()
            assert target.is_file(), (page, ref)
            used.setdefault(target.name, set()).add(lang)
    assert used, "no figure image written"
    images = built_site.path / "assets" / "figures"
    assert {p.name for p in images.iterdir()} == set(used)  # nothing written that no page uses
    assert {"en", "zh"} <= set().union(*used.values())  # both languages' figures have them


def test_a_figure_image_written_to_a_file_waits_until_it_is_near_the_view(tmp_path):
    """matplotlib's <image> of a heat map becomes a lazy <img> filling a <foreignObject> with its
    id, box and transform; a small one stays inline; an attribute the hook would drop is an
    error, not a silently different picture."""
    import base64

    require("mkdocs")  # the hook imports MkDocs' plugin API (the site's toolchain)
    hook = _hook()
    big = base64.b64encode(b"W" * 4096).decode()
    box = 'id="fig1-image0a" transform="scale(1 -1) translate(0 -161.28)" x="43.2" y="-6.48" width="360" height="161.28"'
    page = types.SimpleNamespace(url="sinusoidal/")
    config = types.SimpleNamespace(site_dir=str(tmp_path))
    small = '<image xlink:href="data:image/png;base64,iVBORw0K" x="1" y="2" width="3" height="4"/>'
    out = hook.on_post_page(
        f'<svg><image xlink:href="data:image/webp;base64,{big}" {box}/>{small}</svg>', page, config
    )
    (written,) = (tmp_path / "assets" / "figures").iterdir()
    assert written.read_bytes() == b"W" * 4096 and written.suffix == ".webp"
    img = f'<img src="../assets/figures/{written.name}" alt="" loading="lazy"'
    assert out.startswith(f"<svg><foreignObject {box}>{img} style=")
    assert out.endswith(f"></foreignObject>{small}</svg>")  # under 2 KiB: inline, as it was
    with pytest.raises(ValueError, match="preserveAspectRatio"):
        hook.lazy_image(f'<image xlink:href="x" {box} preserveAspectRatio="none"/>', "a.webp")
